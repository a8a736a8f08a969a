"""An idle window wakes for nothing: no timer runs when nothing changes on screen.

Counted, never timed: the timers still running are looked up on every node of the app, and
the cursor's blinks are stepped by hand (each step is what the blink timer would do).
"""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.app import MMApp
from mm_tui.widgets.prompt import BLINKS_AFTER_INPUT, PromptInput
from scripted_server import Reply
from tests.window.conftest import send, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


def running_timers(app: MMApp) -> list[Any]:
    """Every timer of the app and its widgets that is not paused (it wakes the window)."""
    nodes = [app, *app.screen.walk_children(with_self=True)]
    return [
        timer
        for node in nodes
        for timer in list(node._timers)  # noqa: SLF001 - Textual keeps no public list
        if timer._task is not None and timer._active.is_set()  # noqa: SLF001
    ]


def cursor_changes(prompt: PromptInput, steps: int) -> int:
    """Step the cursor's blink `steps` times (half a second each); how often it changed."""
    changes = 0
    for _ in range(steps):
        before = prompt.cursor_visible_now
        prompt._toggle_cursor_blink_visible()  # noqa: SLF001 - the blink timer's own step
        changes += prompt.cursor_visible_now != before
    return changes


async def test_the_cursor_blinks_after_a_key_then_stands_shown(live_app: Any) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        prompt = app.prompt
        await wait_for(pilot, lambda: prompt.has_focus, "the prompt has the focus")
        assert cursor_changes(prompt, 2 * BLINKS_AFTER_INPUT) == 2 * BLINKS_AFTER_INPUT
        assert cursor_changes(prompt, 120) == 0  # a further minute: not one frame
        assert prompt.cursor_visible_now and not prompt.blink_timer._active.is_set()  # noqa: SLF001
        await pilot.press("a")
        assert cursor_changes(prompt, 2) == 2  # a key: it blinks again


async def test_an_idle_window_runs_no_timer_and_a_turn_wakes_its_clock(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="Done, all good.", chunk_size=4, delay=0.01))
    app = live_app()
    async with app.run_test() as pilot:
        prompt = app.prompt
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        cursor_changes(prompt, 2 * BLINKS_AFTER_INPUT + 1)  # ten seconds without a key
        await wait_for(pilot, lambda: not running_timers(app), "no timer runs at idle")
        await send(pilot, "go")
        assert running_timers(app)  # the turn runs: the spinner turns
        await wait_for(pilot, turn_over(app), "the turn ends")
        cursor_changes(prompt, 2 * BLINKS_AFTER_INPUT + 1)
        await wait_for(pilot, lambda: not running_timers(app), "no timer runs after the turn")
