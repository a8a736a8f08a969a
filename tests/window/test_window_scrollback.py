"""Scrollback from the prompt, the `↓ N new` marker, `/model NAME` checked, the context colour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.events import Notice, TextDelta, TurnStarted
from mm_tui.agent.port import TopLineView
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.status_line import StatusLine
from mm_tui.widgets.top_line import context_style
from tests.window.conftest import play, send, settle, wait_for
from tests.window.test_window_conversation import notices

pytestmark = pytest.mark.anyio


def many_notices(start: int, count: int) -> list[Any]:
    return [Notice("info", f"line {i}") for i in range(start, start + count)]


async def test_page_keys_scroll_from_the_prompt_and_new_output_shows_a_marker(
    still_app: Any,
) -> None:
    app = still_app()
    async with app.run_test(size=(80, 20)) as pilot:
        await play(pilot, many_notices(0, 60))
        transcript = app.transcript
        status = app.query_one(StatusLine)
        assert transcript.following and status.new_below == 0
        assert app.focused is app.query_one(PromptInput)

        await pilot.press("pageup")
        await settle(pilot)
        assert not transcript.following
        where = transcript.scroll_y
        await play(pilot, many_notices(60, 3))
        assert transcript.scroll_y == where  # new output does not drag the view
        assert status.new_below == 3
        assert str(status.render()) == "Ready  ↓ 3 new — End returns to the bottom"

        await pilot.press("shift+pageup", "ctrl+home")
        await settle(pilot)
        assert transcript.scroll_y == 0
        await pilot.press("pagedown")
        await settle(pilot)
        assert 0 < transcript.scroll_y < transcript.max_scroll_y

        await pilot.press("end")  # the prompt is empty: its cursor is at the line's end
        await settle(pilot)
        assert transcript.following and status.new_below == 0
        assert str(status.render()) == "Ready"
        await play(pilot, many_notices(63, 3))
        assert transcript.following  # anchored again: new output is followed


async def test_end_in_the_middle_of_the_prompt_moves_the_cursor_only(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 20)) as pilot:
        await play(pilot, many_notices(0, 60))
        await pilot.press("pageup")
        prompt = app.query_one(PromptInput)
        prompt.insert("hello")
        prompt.move_cursor((0, 0))
        await pilot.press("end")
        await settle(pilot)
        assert prompt.cursor_location == (0, 5)
        assert not app.transcript.following
        await pilot.press("ctrl+end")
        await settle(pilot)
        assert app.transcript.following


async def test_sending_a_message_returns_to_the_bottom(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 20)) as pilot:
        await play(pilot, many_notices(0, 60))
        await pilot.press("pageup", "pageup")
        await settle(pilot)
        assert not app.transcript.following
        await play(pilot, [TurnStarted("next question"), TextDelta("ok")])
        await settle(pilot)
        assert app.transcript.following


async def test_model_name_is_checked_against_the_servers_list(
    model_server: Any, live_app: Any
) -> None:
    model_server.models = ["scripted-model", "other-model"]
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await send(pilot, "/model nope")
        expected = (
            "/model: the server has no model nope — it has: scripted-model (current), other-model"
        )
        await wait_for(pilot, lambda: expected in notices(app), "the refusal is said")
        assert app.turns.top_line().model == "scripted-model"


def test_the_context_turns_amber_then_red_as_it_fills() -> None:
    def view(used: int) -> TopLineView:
        return TopLineView("m", "s", Path("/"), used, 1000, "")

    assert [context_style(view(n)) for n in (0, 699, 700, 899, 900, 1200)] == [
        "",
        "",
        "bold $warning",
        "bold $warning",
        "bold $error",
        "bold $error",
    ]
