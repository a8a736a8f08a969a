"""`mm-tui acp` driven by the ACP SDK's own client over a real stdio pipe (SPEC §9)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import PromptResponse, ToolCallStart

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.acp.client import RecordingClient, diffs, mm_acp, one_turn, texts


def test_a_prompt_streams_thoughts_the_answer_and_the_turn_counters(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(reasoning="The user greets me.", text="Hello **there**.\x1b]0;PWNED\x07 Bye.")
    )
    client = RecordingClient()

    async def scenario() -> PromptResponse:
        async with mm_acp(client, tmp_path, "--base-url", model_server.base_url,
                          "--model", "m") as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            return await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])

    response = asyncio.run(asyncio.wait_for(scenario(), timeout=115))
    assert response.stop_reason == "end_turn"
    assert client.thought_text() == "The user greets me."
    message = client.message_text()
    assert message == "Hello **there**. Bye."  # the escape sequence removed whole
    summary = (response.field_meta or {})["mm-tui"]["summary"]  # not the assistant's text
    assert summary["line"].startswith(
        "⚙ 0 command(s) · 📝 0 file op(s) · 📖 0 skill(s) · 🔎 0 lsp call(s)"
    )
    assert summary["counters"] == {"commands": 0, "file_ops": 0, "skills": 0, "lsp_calls": 0}
    assert model_server.requests[0]["messages"][-1]["content"].endswith("hi")


def test_bash_is_execute_asks_first_and_runs_in_the_sessions_cwd(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "pwd"})]), Reply(text="Done.")
    )
    client = RecordingClient(answer="allow_once")

    reason = one_turn(client, tmp_path, model_server.base_url, "where am I", cwd=project)
    assert reason == "end_turn"
    [start] = client.starts()
    assert start.kind == "execute" and start.status == "pending" and start.title == "bash pwd"
    assert start.raw_input == {"command": "pwd"}
    [(question, options)] = client.questions
    assert question.tool_call_id == start.tool_call_id and question.kind == "execute"
    assert texts(question.content) == ["pwd"]  # exactly what will run
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    statuses = [u.status for u in client.progress(start.tool_call_id)]
    assert statuses[0] == "in_progress" and statuses[-1] == "completed"
    final = client.final(start.tool_call_id)
    assert texts(final.content) == [f"{project}\n"]  # the session's cwd, not the process's
    assert model_server.requests[1]["messages"][-1]["content"] == f"{project}\n"


def test_a_refused_command_fails_with_the_seeds_rejection_text(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "touch refused.txt"})]),
        Reply(text="Understood."),
    )
    client = RecordingClient(answer="reject_once")

    reason = one_turn(client, tmp_path, model_server.base_url, "make a file")
    assert reason == "end_turn"
    [start] = client.starts()
    final = client.final(start.tool_call_id)
    assert final.status == "failed"
    assert texts(final.content) == ["[command rejected by the user]"]
    assert not (tmp_path / "refused.txt").exists()
    assert model_server.requests[1]["messages"][-1]["content"] == "[command rejected by the user]"


def test_allow_always_allows_what_its_name_says_and_output_is_shown_literally(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo -e '\\033]0;T\\007\\033[31mone'"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo two"})]),
        Reply(text="Both ran."),
    )
    client = RecordingClient(answer="allow_always")

    reason = one_turn(client, tmp_path, model_server.base_url, "twice")
    assert reason == "end_turn"
    [(_, options)] = client.questions  # `echo two` ran on the grant
    assert options[1].name == "Allow echo with any arguments (it only reads) for the session"
    assert [texts(client.final(s.tool_call_id).content) for s in client.starts()] == [
        ["one\n"],
        ["two\n"],
    ]


def test_allow_always_on_an_interpreter_allows_exactly_that_command(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "python3 --version"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": 'python3 -c \'open("PWNED", "w")\''})]),
        Reply(text="Both asked."),
    )
    client = RecordingClient(answer="allow_always")

    assert one_turn(client, tmp_path, model_server.base_url, "twice") == "end_turn"
    names = [options[1].name for _, options in client.questions]
    assert names == ["Allow exactly this command for the session"] * 2  # asked again


def test_file_changes_travel_as_diffs_new_file_from_empty_edit_with_old_and_new_text(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "src/new.py", "content": "a = 1\n"})]),
        Reply(tool_calls=[ToolCall("edit_file", {"path": "src/new.py",
                                                 "edits": [{"old": "a = 1", "new": "a = 2"}]})]),
        Reply(text="Written and edited."),
    )  # fmt: skip
    client = RecordingClient(answer="allow_once")

    reason = one_turn(client, tmp_path, model_server.base_url, "write it")
    assert reason == "end_turn"
    path = str(tmp_path / "src/new.py")
    write, edit = client.starts()
    assert (write.kind, edit.kind) == ("edit", "edit")
    assert [loc.path for loc in write.locations or []] == [path]
    (asked_write, _), (asked_edit, _) = client.questions
    [planned] = diffs(asked_write.content)  # shown before anything is written
    assert (planned.path, planned.old_text, planned.new_text) == (path, None, "a = 1\n")
    [planned] = diffs(asked_edit.content)
    assert (planned.old_text, planned.new_text) == ("a = 1\n", "a = 2\n")
    [made] = diffs(client.final(write.tool_call_id).content)
    assert (made.path, made.old_text, made.new_text) == (path, None, "a = 1\n")
    [made] = diffs(client.final(edit.tool_call_id).content)
    assert (made.old_text, made.new_text) == ("a = 1\n", "a = 2\n")
    assert (tmp_path / "src/new.py").read_text() == "a = 2\n"


def test_read_tools_are_read_with_absolute_locations_and_never_ask(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    skill = tmp_path / ".mm/skills/style.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: the house style\n---\nShort names.\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt", "start": 2})]),
        Reply(tool_calls=[ToolCall("read_skill", {"name": "style"})]),
        Reply(text="Read both."),
    )
    client = RecordingClient(answer="reject_once")  # would refuse, if it were asked

    reason = one_turn(client, tmp_path, model_server.base_url, "read")
    assert reason == "end_turn"
    assert client.questions == []
    read, skill_call = client.starts()
    assert read.kind == "read" and skill_call.kind == "read"
    [location] = read.locations or []
    assert (location.path, location.line) == (str(tmp_path / "notes.txt"), 2)
    assert [loc.path for loc in skill_call.locations or []] == [str(skill)]
    assert texts(client.final(read.tool_call_id).content) == ["two\nthree\n"]
    assert client.final(skill_call.tool_call_id).status == "completed"
    assert "📝 1 file op(s) · 📖 1 skill(s)" in client.summaries[-1]["line"]


def test_the_loop_verdict_is_a_notice_and_a_server_fault_fails_the_prompt(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    for _ in range(3):
        model_server.enqueue(Reply(tool_calls=[ToolCall("read_file", {"path": "missing.txt"})]))
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "bad key"}}))
    client = RecordingClient()

    with pytest.raises(RequestError) as failed:  # the turn failed: the prompt's answer says so
        one_turn(client, tmp_path, model_server.base_url, "read it")
    assert "refused the API key (HTTP 401: bad key)" in str(failed.value)
    assert "refused the API key" in str((failed.value.data or {})["details"])
    assert client.message_text() == ""  # nothing of mm-tui's passes for the model's words
    [(level, verdict)] = client.notices()
    assert level == "loop" and "read_file: the same call and result 3 times in a row" in verdict
    assert all(isinstance(s, ToolCallStart) and s.kind == "read" for s in client.starts())


def test_a_call_is_in_progress_only_once_it_runs_after_its_answer(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo ran"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo refused"})]),
        Reply(text="One of two."),
    )
    client = RecordingClient(answer=["allow_once", "reject_once"])
    assert one_turn(client, tmp_path, model_server.base_url, "twice") == "end_turn"
    ran, refused = client.starts()
    asked_first = client.updates.index(ran)  # the question comes between start and progress
    statuses = [u.status for u in client.progress(ran.tool_call_id)]
    assert statuses[0] == "in_progress" and statuses[-1] == "completed"
    assert client.updates.index(client.progress(ran.tool_call_id)[0]) > asked_first
    # the refused call never ran: no in_progress, only its failure
    assert [u.status for u in client.progress(refused.tool_call_id)] == ["failed"]


def test_the_session_id_is_the_cores_session(tmp_path: Path, model_server: ScriptedServer) -> None:
    model_server.enqueue(Reply(text="Noted."))
    client = RecordingClient()
    assert one_turn(client, tmp_path, model_server.base_url, "remember") == "end_turn"
    [session_id] = client.session_ids
    [saved] = (tmp_path / "data").rglob(f"{session_id}.jsonl")  # the file the turn went to
    assert "remember" in saved.read_text()


def test_crlf_mixed_and_lone_cr_line_ends_travel_exactly_in_acp_diffs(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    # CRLF lines, an LF line, a lone CR inside a line and a form feed: edit_file changes one
    # line, then write_file rewrites the whole file in CRLF. Every text ACP shows, before and
    # after each edit, is the file's bytes exactly.
    path = tmp_path / "crlf.txt"
    original = b"one\r\ntwo\r\nlf only\nin\rside\r\n\x0cpage\r\nlast\r\n"
    path.write_bytes(original)
    rewritten = "alpha\r\nbeta\r\n"
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("edit_file", {"path": "crlf.txt",
                                                 "edits": [{"old": "two", "new": "TWO"}]})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "crlf.txt", "content": rewritten})]),
        Reply(text="Edited and rewritten."),
    )  # fmt: skip
    client = RecordingClient(answer="allow_once")
    assert one_turn(client, tmp_path, model_server.base_url, "edit it") == "end_turn"
    edited = original.replace(b"two", b"TWO").decode()
    assert path.read_bytes() == rewritten.encode()
    edit, write = client.starts()
    (asked_edit, _), (asked_write, _) = client.questions
    [planned] = diffs(asked_edit.content)
    assert (planned.old_text, planned.new_text) == (original.decode(), edited)
    [made] = diffs(client.final(edit.tool_call_id).content)
    assert (made.old_text, made.new_text) == (original.decode(), edited)
    [planned] = diffs(asked_write.content)
    assert (planned.old_text, planned.new_text) == (edited, rewritten)
    [made] = diffs(client.final(write.tool_call_id).content)
    assert (made.old_text, made.new_text) == (edited, rewritten)


def test_a_bash_call_given_more_time_shows_it_in_its_title(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo built", "timeout": 600})]),
        Reply(text="Built."),
    )
    client = RecordingClient(answer="allow_once")

    assert one_turn(client, tmp_path, model_server.base_url, "build it") == "end_turn"
    [start] = client.starts()
    assert start.title == "bash echo built · timeout 10m"
    assert texts(client.final(start.tool_call_id).content) == ["built\n"]
