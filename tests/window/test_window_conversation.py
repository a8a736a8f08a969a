"""Pilot tests: the window drives the real Agent against the scripted model server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.events import WAITING_FOR_ANSWER, ToolStatus
from mm_tui.app import MMApp
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.widgets.output_log import DiffLog
from mm_tui.widgets.permission import PermissionQuestion
from mm_tui.widgets.status_line import StatusLine
from scripted_server import Reply, ToolCall
from tests.waiting import wait_until
from tests.window.conftest import agent_of, answer, send, wait_for

pytestmark = pytest.mark.anyio

SUMMARY_START = "⚙ 0 command(s) · 📝 0 file op(s) · 📖 0 skill(s) · 🔎 0 lsp call(s) · "


def answers(app: MMApp) -> list[str]:
    return [block.to_markdown() for block in app.query(AnswerBlock)]


def notices(app: MMApp) -> list[str]:
    return [notice.text for notice in app.query(NoticeLine)]


def turn_over(app: MMApp, turns: int = 1) -> Any:
    """A condition: `turns` summary lines are shown and no turn runs."""
    return lambda: len(app.query(SummaryLine)) >= turns and not app.turns.running


def tool_messages(server: Any, request: int) -> list[str]:
    """The tool results the model was sent in its `request`-th call (1-based)."""
    messages = server.requests[request - 1]["messages"]
    return [m["content"] for m in messages if m["role"] == "tool"]


async def test_a_streamed_answer_is_rendered_as_markdown(model_server: Any, live_app: Any) -> None:
    text = "Hello **world**.\n\n```python\nprint('hi')\n```\n"
    model_server.enqueue(Reply(text=text, chunk_size=3))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Say hello")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert answers(app) == [text.strip()]
        assert [m.text for m in app.query(UserMessage)] == ["Say hello"]
        summary = app.query_one(SummaryLine).summary.line()
        assert summary.startswith(SUMMARY_START)
        assert app.query_one(StatusLine).state == ""


async def test_a_bash_call_allowed_with_a_runs_once(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo hi"})]), Reply(text="It said hi.")
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Run echo")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the row asks")
        assert app.query_one(StatusLine).state == WAITING_FOR_ANSWER
        assert app.query_one(PermissionQuestion).request.detail == "echo hi"
        await answer(pilot, "a")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.transcript.rows.values()))
        assert (row.status, row.output, row.answer) == (ToolStatus.DONE, "hi\n", "allowed once")
        assert tool_messages(model_server, 2) == ["hi\n"]
        assert app.query_one("#prompt").text == ""  # the key answered, it was not typed
        assert agent_of(app).permission_state().grants == set()


async def test_s_allows_bash_for_the_session_and_the_next_call_is_not_asked(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo one"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo two"})]),
        Reply(text="Both ran."),
    )
    app = live_app()
    asked: list[str] = []
    async with app.run_test() as pilot:
        await send(pilot, "Run two commands")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the first row asks")
        asked += list(app.turns.questions)
        await answer(pilot, "s")
        await wait_for(pilot, turn_over(app), "the turn ends")
        first, second = app.transcript.rows.values()
        assert first.answer == "allowed for the session"
        assert second.answer == "allowed without asking"
        assert asked == [first.call_id]
        assert (first.output, second.output) == ("one\n", "two\n")
        assert agent_of(app).permission_state().grants == {"bash(echo *)"}  # the prefix


async def test_permissions_lists_the_grants_and_revokes_one(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "true"})]), Reply(text="ok")
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Run true")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the row asks")
        await answer(pilot, "s")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await send(pilot, "/permissions")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "GrantsScreen", "grants")
        assert app.screen.grants == {"bash(true *)"}  # the prefix
        await pilot.press("enter", "escape")
        await wait_for(
            pilot, lambda: not agent_of(app).permission_state().grants, "bash is revoked"
        )
        await wait_for(pilot, lambda: "revoked: bash(true *) asks again" in notices(app), "said")


async def test_a_bash_call_rejected_with_r_is_not_run(
    model_server: Any, live_app: Any, project: Path
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "touch made.txt"})]),
        Reply(text="Understood."),
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Make a file")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the row asks")
        await answer(pilot, "r")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.transcript.rows.values()))
        assert (row.status, row.answer) == (ToolStatus.REJECTED, "rejected")
        assert tool_messages(model_server, 2) == ["[command rejected by the user]"]
        assert not (project / "made.txt").exists()


async def test_an_edit_asks_with_its_diff_and_shows_it_when_done(
    model_server: Any, live_app: Any, project: Path
) -> None:
    old = 'return f"Hello, {name[0].upper()}{name[1:]}!"'
    new = "return f\"Hello, {name.title() or 'stranger'}!\""
    edit = {"path": "greeter.py", "edits": [{"old": old, "new": new}]}
    model_server.enqueue(Reply(tool_calls=[ToolCall("edit_file", edit)]), Reply(text="Fixed."))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Fix greet for empty names")
        await wait_for(pilot, lambda: bool(app.turns.questions), "the row asks")
        question = app.query_one(PermissionQuestion)
        assert question.request.diff and "+" in question.request.diff
        assert question.query(DiffLog)
        await answer(pilot, "a")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.transcript.rows.values()))
        assert row.status == ToolStatus.DONE and row.diff
        assert new in (project / "greeter.py").read_text()
        row.expanded = True
        await pilot.pause()
        assert row.query(DiffLog)


async def test_esc_interrupts_a_stream_and_the_next_turn_works(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="word " * 400, chunk_size=5, delay=0.02))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Talk for a long time")
        await wait_for(pilot, lambda: bool(app.query(AnswerBlock)), "the answer streams")
        await pilot.press("escape")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert "interrupted by the user" in notices(app)
        assert len(answers(app)[0]) < len("word " * 400)
        model_server.enqueue(Reply(text="Back."))
        await send(pilot, "Still there?")
        await wait_for(pilot, turn_over(app, 2), "the second turn ends")
        assert answers(app)[-1] == "Back."


async def test_esc_interrupts_a_running_sleep(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "sleep 20"})]), Reply(text="ok")
    )
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "Wait a bit")
        await wait_for(
            pilot, lambda: app.query_one(StatusLine).state == "Running bash", "the command runs"
        )
        await pilot.press("escape")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.transcript.rows.values()))
        assert row.status == ToolStatus.INTERRUPTED
        assert len(model_server.requests) == 1  # the model is not called again


async def test_ctrl_c_without_a_selection_interrupts(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(Reply(text="word " * 400, chunk_size=5, delay=0.02))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Talk")
        await wait_for(pilot, lambda: bool(app.query(AnswerBlock)), "the answer streams")
        await pilot.press("ctrl+c")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert "interrupted by the user" in notices(app)


async def test_a_message_typed_during_a_turn_is_queued(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo first"})]),
        Reply(text="first answer"),
        Reply(text="second answer"),
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "one")
        await wait_for(
            pilot, lambda: bool(app.turns.questions), "the first turn waits on a question"
        )
        await send(pilot, "two")
        assert list(app.turns.queue) == ["two"]
        assert app.query_one(StatusLine).queued == 1
        await answer(pilot, "a")
        await wait_for(pilot, turn_over(app, 2), "both turns end")
        assert [m.text for m in app.query(UserMessage)] == ["one", "two"]
        assert answers(app) == ["first answer", "second answer"]
        assert model_server.requests[2]["messages"][-1] == {"role": "user", "content": "two"}
        assert app.query_one(StatusLine).queued == 0


async def test_new_starts_afresh(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(Reply(text="Hi."))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Hello")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await send(pilot, "/new")
        await wait_for(pilot, lambda: not app.query(UserMessage), "the transcript is cleared")
        assert [m["role"] for m in agent_of(app).messages] == ["system"]
        assert any(text.startswith("new session") for text in notices(app))


async def test_compact_summarises_the_history_like_a_turn(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(
        Reply(text="Hi."), Reply(text="Fine."), Reply(text="Sunny."), Reply(text="We said hello.")
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Hello")
        await wait_for(pilot, turn_over(app), "the first turn ends")
        await send(pilot, "How are you?")
        await wait_for(pilot, turn_over(app, 2), "the second turn ends")
        await send(pilot, "And the weather?")
        await wait_for(pilot, turn_over(app, 3), "the third turn ends")
        await send(pilot, "/compact")
        await wait_for(
            pilot, lambda: any(t.startswith("compacted") for t in notices(app)), "compacted"
        )
        await wait_for(pilot, lambda: not app.turns.running, "the status line is idle again")
        assert app.query_one(StatusLine).state == ""
        assert "We said hello." in str(agent_of(app).messages)


async def test_compact_of_a_short_talk_says_there_is_nothing_to_do(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="Hi."))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Hello")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await send(pilot, "/compact")
        await wait_for(pilot, lambda: len(notices(app)) == 1, "one notice")
        assert notices(app)[0].startswith("nothing to compact yet")
        await wait_for(pilot, lambda: not app.turns.running, "idle again")


async def test_yolo_toggles_asking(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo free"})]), Reply(text="ok")
    )
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await send(pilot, "/yolo")
        await wait_for(pilot, lambda: agent_of(app).permission_state().yolo, "yolo is on")
        await send(pilot, "Run it")
        await wait_for(pilot, turn_over(app), "the turn ends without a question")
        row = next(iter(app.transcript.rows.values()))
        assert (row.status, row.output) == (ToolStatus.DONE, "free\n")
        await send(pilot, "/yolo")
        await wait_for(pilot, lambda: not agent_of(app).permission_state().yolo, "yolo is off")


async def test_export_writes_the_transcript_as_markdown(
    model_server: Any, live_app: Any, project: Path
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo exported"})]),
        Reply(text="All **good**."),
    )
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "Export me")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await send(pilot, "/export talk.md")
        target = project / "talk.md"
        await wait_for(pilot, target.exists, "the file is written")
        text = target.read_text()
        assert "> Export me" in text
        assert "**‣ bash echo exported** — ✓ done" in text
        assert "```text\nexported\n```" in text
        assert "All **good**." in text
        assert "⚙ 1 command(s)" in text


async def test_a_server_fault_is_one_notice_not_a_crash(model_server: Any, live_app: Any) -> None:
    error_body = {"error": {"message": "invalid api key"}}
    model_server.enqueue(Reply(status=401, error_body=error_body), Reply(text="fine now"))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "Hello")
        await wait_for(pilot, turn_over(app), "the turn ends")
        errors = [n for n in app.query(NoticeLine) if n.level == "error"]
        assert len(errors) == 1
        await send(pilot, "Again")
        await wait_for(pilot, turn_over(app, 2), "the next turn ends")
        assert answers(app) == ["fine now"]


async def test_ctrl_q_quits_and_ends_the_running_command(
    model_server: Any, live_app: Any, project: Path
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo $$ > pid.txt; sleep 20"})])
    )
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "Wait")
        pid_file = project / "pid.txt"
        await wait_for(pilot, lambda: pid_file.exists() and pid_file.read_text(), "it runs")
        await pilot.press("ctrl+q")
    pid = int(pid_file.read_text())

    def gone() -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False

    wait_until(gone, "the command's process is gone", timeout=10, interval=0.02)


async def test_the_loop_detectors_verdicts_are_distinct_notices(
    model_server: Any, live_app: Any
) -> None:
    same = Reply(tool_calls=[ToolCall("bash", {"command": "false"})])
    model_server.enqueue(*[same] * 6, Reply(text="never reached"))
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "Try again and again")
        await wait_for(pilot, turn_over(app), "the loop detector stops the turn")
        shown = list(app.query(NoticeLine))
        assert {n.level for n in shown} == {"loop"}  # warnings and the stop; no error repeat
        assert len(shown) >= 2
        assert shown[-1].text.startswith("[error: the model repeated the same bash call 6 times")
        rows = list(app.transcript.rows.values())
        assert rows[-1].status == ToolStatus.LOOP_DETECTED
        assert rows[-1].expanded  # a loop verdict opens its row


async def test_the_transcript_follows_the_bottom_until_scrolled_up(still_app: Any) -> None:
    from mm_tui.agent.events import ToolFinished, TurnStarted
    from tests.window.conftest import play, settle
    from tests.window.window_scenes import bash_call

    def rows(start: int) -> list[Any]:
        events: list[Any] = []
        for n in range(start, start + 30):
            events += [
                bash_call(f"c{n}", f"echo {n}"),
                ToolFinished(f"c{n}", "bash", f"bash echo {n}", ToolStatus.DONE, 0.1, "x"),
            ]
        return events

    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = app.transcript
        await play(pilot, [TurnStarted("many"), *rows(0)])
        assert transcript.scroll_y == transcript.max_scroll_y > 0
        transcript.scroll_to(y=0, animate=False)
        await settle(pilot)  # the blocks above the view come back, the view kept
        where = transcript.scroll_y
        await play(pilot, rows(30))
        assert transcript.scroll_y == where  # the person reads above: left where they are
        transcript.scroll_end(animate=False)
        await play(pilot, rows(60))
        assert transcript.scroll_y == transcript.max_scroll_y  # back at the bottom: follows


async def test_a_bash_call_given_more_time_runs_to_the_end_and_its_row_says_so(
    model_server: Any, live_app: Any
) -> None:
    command = "sleep 2; echo built"
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": command, "timeout": 90})]),
        Reply(text="Built."),
    )
    app = live_app(permissions="allow", bash_timeout=1.0, bash_timeout_max=120.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "Build it")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.transcript.rows.values()))
        assert (row.status, row.output) == (ToolStatus.DONE, "built\n")
        assert row.render().plain.startswith(f"‣ bash {command} · timeout 1m30s  ")
        assert tool_messages(model_server, 2) == ["built\n"]
