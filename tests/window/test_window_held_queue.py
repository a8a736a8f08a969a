"""Esc with messages queued: the turn stops, the queue is kept, not sent; the person
takes a message back to edit it (Alt+↑), sends the rest (`/queue`) or drops them.

Pilot tests against the real Agent, the scripted server over HTTP and real bash.
"""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.app import MMApp
from mm_tui.widgets.blocks import UserMessage
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.status_line import QueuedMessages, StatusLine
from scripted_server import Reply, ToolCall
from tests.window.conftest import send, settle, wait_for
from tests.window.test_window_conversation import notices, turn_over

pytestmark = pytest.mark.anyio


def user_messages_sent(server: Any) -> list[str]:
    """The last user message of each request the model received."""
    return [
        r["messages"][-1]["content"] for r in server.requests if r["messages"][-1]["role"] == "user"
    ]


async def queue_three_behind_a_question(pilot: Any, app: MMApp) -> None:
    await send(pilot, "one")
    await wait_for(pilot, lambda: bool(app.turns.questions), "the turn waits on a question")
    for text in ("two", "three", "four"):
        await send(pilot, text)
    assert list(app.turns.queue) == ["two", "three", "four"]


async def test_esc_with_three_queued_keeps_them_and_one_is_edited_then_all_go_in_order(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo never"})]),
        Reply(text="answer two"),
        Reply(text="answer three"),
        Reply(text="answer four"),
    )
    app = live_app()
    async with app.run_test() as pilot:
        await queue_three_behind_a_question(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turns.running, "the turn stops")
        await settle(pilot)
        assert list(app.turns.queue) == ["two", "three", "four"]  # kept, none sent
        assert len(model_server.requests) == 1
        assert (
            "3 queued messages kept — Alt+↑ takes the last back to edit, /queue sends "
            "them, /queue clear drops them" in notices(app)
        )
        assert app.query_one(StatusLine).held
        assert str(app.query_one(QueuedMessages).render()).startswith("⏸ kept: two")

        await pilot.press("alt+up")  # the newest comes back to the prompt
        prompt = app.query_one(PromptInput)
        assert prompt.text == "four"
        assert list(app.turns.queue) == ["two", "three"]
        prompt.insert(" and five")
        await pilot.press("enter")  # a new message goes after the kept ones, which go first
        await wait_for(pilot, turn_over(app, 4), "the three turns end")
        assert user_messages_sent(model_server)[1:] == ["two", "three", "four and five"]
        assert [m.text for m in app.query(UserMessage)] == ["one", "two", "three", "four and five"]


async def test_queue_clear_drops_the_kept_messages_and_queue_alone_sends_them(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo never"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo never again"})]),
        Reply(text="answer two"),
        Reply(text="answer three"),
    )
    app = live_app()
    async with app.run_test() as pilot:
        await queue_three_behind_a_question(pilot, app)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turns.running, "the turn stops")
        await send(pilot, "/queue clear")
        await settle(pilot)
        assert not app.turns.queue and not app.query_one(QueuedMessages).display
        assert "/queue: dropped 3 queued messages" in notices(app)
        await send(pilot, "/queue")
        await settle(pilot)
        assert "/queue: no message is waiting" in notices(app)

        await send(pilot, "again")  # nothing held now: sent at once
        await wait_for(pilot, lambda: bool(app.turns.questions), "the turn waits on a question")
        await send(pilot, "two")
        await send(pilot, "three")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.turns.running, "the turn stops")
        await send(pilot, "/queue")
        await wait_for(pilot, turn_over(app, 4), "the kept messages were answered")
        assert user_messages_sent(model_server)[-2:] == ["two", "three"]


async def test_esc_with_an_empty_queue_and_alt_up_with_nothing_queued_change_nothing(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "echo never"})]))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "one")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the turn waits on a question")
        await pilot.press("escape")
        await wait_for(pilot, turn_over(app), "the turn stops")
        assert not any("kept" in line for line in notices(app))
        app.query_one(PromptInput).insert("typed")
        await pilot.press("alt+up")
        assert app.query_one(PromptInput).text == "typed"
        assert not app.query_one(StatusLine).held
