"""`!command` in the prompt: the person's shell command runs through the model's bash
tool and its permission gate, shows as the same row, can be interrupted, and its output goes
along with the next message.

Pilot tests against the real Agent, the scripted server over HTTP and real bash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.shell_commands import ATTACHED
from mm_tui.app import MMApp
from mm_tui.widgets.blocks import UserMessage
from mm_tui.widgets.tool_row import ToolRow
from mm_tui.window.turns import SHELL_USAGE
from scripted_server import Reply, ToolCall
from tests.window.conftest import answer, send, settle, wait_for
from tests.window.test_window_conversation import notices, turn_over

pytestmark = pytest.mark.anyio


def rows(app: MMApp) -> list[ToolRow]:
    return list(app.query(ToolRow))


def command_over(app: MMApp, count: int = 1) -> Any:
    """A condition: `count` rows have finished and nothing runs."""
    return lambda: (
        len(rows(app)) >= count
        and all(row.status is not ToolStatus.RUNNING for row in rows(app))
        and not app.turns.running
    )


async def test_a_command_asks_runs_as_a_row_and_its_output_goes_with_the_next_message(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="It printed hello."))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "!echo hello; echo there")
        await answer(pilot, "a")  # the same question as the model's bash
        await wait_for(pilot, command_over(app), "the command ends")
        await settle(pilot)
        (row,) = rows(app)
        assert row.title == "bash echo hello; echo there"
        assert row.status is ToolStatus.DONE and "hello\nthere" in row.output
        assert ATTACHED.format(command="echo hello; echo there") in notices(app)
        assert not model_server.requests  # the model is not asked anything yet

        await send(pilot, "what did it print?")
        await wait_for(pilot, turn_over(app), "the turn ends")
        sent = model_server.requests[0]["messages"][-1]["content"]
        assert sent == (
            "what did it print?\n\n<shell-command>\n$ echo hello; echo there\nhello\nthere\n\n"
            "</shell-command>"
        )
        assert [m.text for m in app.query(UserMessage)] == [
            "!echo hello; echo there",
            "what did it print?",
        ]
        history = app.turns.port.messages  # type: ignore[union-attr]
        assert not any(m["role"] == "tool" for m in history)  # not a call of the model's


async def test_bang_alone_says_how_and_runs_nothing(model_server: Any, live_app: Any) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "!")
        await send(pilot, "!   ")
        await settle(pilot)
        assert notices(app).count(SHELL_USAGE) == 2
        assert not rows(app) and not app.turns.running and not app.turns.queue


async def test_a_command_that_never_ends_is_interrupted_by_esc_and_attaches_nothing(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="ok"))
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "!echo started; sleep 600")
        await wait_for(pilot, lambda: "started" in "".join(r.output for r in rows(app)), "output")
        await pilot.press("escape")
        await wait_for(pilot, command_over(app), "the command is interrupted")
        assert rows(app)[0].status is ToolStatus.INTERRUPTED
        await send(pilot, "hi")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert model_server.requests[0]["messages"][-1]["content"] == "hi"


async def test_rm_rf_under_ask_then_rejected_removes_nothing(
    model_server: Any, live_app: Any, project: Path
) -> None:
    victim = project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "!rm -rf victim")
        await answer(pilot, "r")
        await wait_for(pilot, command_over(app), "the command is refused")
        await settle(pilot)
        assert (victim / "keep.txt").read_text() == "precious\n"
        assert rows(app)[0].status is ToolStatus.REJECTED
        assert not any(line.startswith("📎") for line in notices(app))


async def test_a_deny_rule_of_the_config_refuses_the_persons_command_too(
    model_server: Any, live_app: Any, project: Path
) -> None:
    (project / "keep.txt").write_text("x\n")
    app = live_app(yolo=True, deny_rules=("bash(rm *)",))
    async with app.run_test() as pilot:
        await send(pilot, "!rm keep.txt")
        await wait_for(pilot, command_over(app), "the command is refused")
        assert (project / "keep.txt").exists()
        assert rows(app)[0].status is ToolStatus.REJECTED


async def test_a_command_typed_during_a_turn_waits_its_turn_in_the_queue(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo model"})]),
        Reply(text="done"),
        Reply(text="ok"),
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "talk")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the turn waits on a question")
        await send(pilot, "!echo queued")
        assert list(app.turns.queue) == ["!echo queued"]
        await answer(pilot, "s")  # bash for the session: the person's command runs unasked
        await wait_for(pilot, command_over(app, 2), "the command ran after the turn")
        await send(pilot, "and?")
        await wait_for(pilot, turn_over(app, 2), "the second turn ends")
        assert "$ echo queued\nqueued" in model_server.requests[2]["messages"][-1]["content"]
