"""What the window shows keeps the order things happened in: the person's message and the
window's own lines about it come before the answer of the turn they start.

The race this pins: the 10 Hz tick can be queued before the message's echo, and the tick
takes whatever the core's worker (a real thread) already produced. Found by trying mm-tui in
tmux under load: a queued "list files" was shown below its own turn's answer and question.
"""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.app import MMApp
from mm_tui.scripted_server import Reply
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, UserMessage
from mm_tui.window import event_bridge as notes
from tests.waiting import await_until
from tests.window.conftest import wait_for
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
