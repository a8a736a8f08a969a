"""What the window shows keeps the order things happened in: the person's message and the
window's own lines about it come before the answer of the turn they start.

The race this pins: the 10 Hz tick can be queued before the message's echo, and the tick
takes whatever the core's worker (a real thread) already produced. Found by trying mm-tui in
tmux under load: a queued "list files" was shown below its own turn's answer and question.
"""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.agent.events import (
    AssistantMessageDone,
    Notice,
    TextDelta,
    TurnEnded,
    TurnStarted,
    TurnSummary,
)
from mm_tui.app import MMApp
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.window import event_bridge as notes
from scripted_server import Reply
from tests.waiting import await_until
from tests.window.conftest import play, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


def shown_in_order(app: MMApp) -> list[str]:
    """The transcript's messages, notices and answers, top to bottom."""
    shown: list[str] = []
    for widget in app.screen.query("*"):
        if isinstance(widget, UserMessage):
            shown.append(f"› {widget.text}")
        elif isinstance(widget, NoticeLine):
            shown.append(f"notice {widget.text}")
        elif isinstance(widget, AnswerBlock):
            shown.append(f"answer {widget.to_markdown()}")
    return shown


async def hold_the_window_until_the_core_answered(app: MMApp) -> None:
    """Keep the app's message loop busy (as a loaded machine does) until the new turn's
    answer waits in the bridge: whatever the window handles next finds it there."""
    done = lambda: any(isinstance(e, notes.TurnWorkerDone) for e in list(app.bridge._pending))  # noqa: E731
    await await_until(done, "the core finished its turn", timeout=20, interval=0.01)


async def test_a_message_sent_while_a_tick_waits_is_shown_before_its_answer(
    model_server: Any, live_app: Any, project: Any
) -> None:
    (project / "notes.txt").write_text("some notes\n")
    model_server.enqueue(Reply(text="the answer"))
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the core is ready")
        app.call_later(hold_the_window_until_the_core_answered, app)
        app.post_message(notes.Ticked())  # a tick queued before the message is sent
        app.turns.submit("look at @notes.txt")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert shown_in_order(app)[-3:] == [
            "› look at @notes.txt",
            "notice 📎 notes.txt (11 characters)",
            "answer the answer",
        ]


async def test_events_that_come_together_are_taken_together_and_drawn_in_one_frame(
    still_app: Any,
) -> None:
    """The core sends an answer's end, its summary and the turn's end a few milliseconds
    apart: an event arriving while the first of a burst waits (`SETTLE_SECONDS`) is taken
    with it, and the changes of a take are drawn in one frame (one layout), not one each."""
    app: MMApp = still_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: not app.events_waiting, "start-up's events are taken")
        takes: list[list[str]] = []
        take = app.bridge.take

        def noted_take() -> list[notes.WindowEvent]:
            events = take()
            takes.append([getattr(event, "text", "") for event in events])
            return events

        app.bridge.take = noted_take
        frames: list[int] = []  # per frame drawn: the notices on screen
        display = app._display  # pyright: ignore[reportPrivateUsage]

        def noted_display(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                frames.append(len(app.query(NoticeLine)))
            display(screen, renderable)

        app._display = noted_display  # pyright: ignore[reportPrivateUsage]
        app.bridge(Notice("info", "first"))
        # The window has seen the first (it waits for more, or has taken it already): looked
        # for often, well within SETTLE_SECONDS.
        seen = lambda: app._settling or bool(takes)  # pyright: ignore[reportPrivateUsage]  # noqa: E731
        await await_until(seen, "the first is seen", timeout=30, interval=0.001)
        app.bridge(Notice("info", "second"))
        await wait_for(pilot, lambda: not app.events_waiting, "both are taken")
        await wait_for(pilot, lambda: bool(frames) and frames[-1] == 2, "both are drawn")
        assert takes == [["first", "second"]]
        assert 1 not in frames, frames  # no frame showed one notice without the other


async def test_the_events_of_a_take_are_drawn_together_after_it(still_app: Any) -> None:
    """An answer's end, its summary and the turn's end taken together are drawn together: no
    frame shows the answer ended without its summary (each would be a layout and a frame)."""
    app: MMApp = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        text = "".join(f"Line {n} of the answer.\n\n" for n in range(30))
        await play(pilot, [TurnStarted("go"), TextDelta(text)])
        await wait_for(pilot, lambda: bool(app.query(AnswerBlock)), "the answer is shown")
        frames: list[bool] = []  # per frame drawn: is the summary on screen?
        display = app._display  # pyright: ignore[reportPrivateUsage]

        def noted_display(screen: Any, renderable: Any) -> None:
            if renderable is not None:
                summaries = app.query(SummaryLine)
                frames.append(bool(summaries) and summaries.last().region.height > 0)
            display(screen, renderable)

        app._display = noted_display  # pyright: ignore[reportPrivateUsage]
        ending = [AssistantMessageDone(text, ""), TurnSummary(0, 0, 0, 0, 1.0, 10, 5)]
        await play(pilot, [*ending, TurnEnded("answered")])
        await wait_for(pilot, lambda: bool(frames) and frames[-1], "the summary is drawn")
        assert all(frames), frames
