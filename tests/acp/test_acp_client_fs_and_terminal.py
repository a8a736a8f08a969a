"""`mm-tui acp` with an editor that offers its file system and terminals (the SDK's client,
over a real stdio pipe): edits respect the editor's unsaved buffers, commands run in its
terminals, and the checks mm-tui makes of its own writes and commands still hold."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block
from acp.schema import TerminalToolCallContent

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.acp.client import diffs, mm_acp, one_turn, texts
from tests.acp.editor_client import BOTH, FS, TERMINAL, EditorClient


def project_with(tmp_path: Path, name: str, text: str) -> tuple[Path, Path]:
    project = tmp_path / "project"
    project.mkdir()
    path = project / name
    path.write_text(text)
    return project, path


def test_read_file_reads_the_editors_unsaved_buffer(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "saved\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt", "numbered": True})]),
        Reply(text="Read."),
    )
    client = EditorClient(buffers={str(notes): "saved\nnot saved yet\n"})

    assert one_turn(client, tmp_path, model_server.base_url, "read", cwd=project, capabilities=FS)
    assert model_server.requests[1]["messages"][-1]["content"] == (
        "     1\tsaved\n     2\tnot saved yet\n"
    )
    assert client.methods() == ["fs/read_text_file"]


def test_an_editor_that_cannot_read_the_file_is_said_in_one_line_and_nothing_is_written(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "one\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "two\n"})]),
        Reply(text="Could not."),
    )
    client = EditorClient(refuse_reads=True)

    one_turn(client, tmp_path, model_server.base_url, "read", cwd=project, capabilities=FS)
    said = "the editor could not read it (Internal error (the buffer is being reloaded))"
    answers = [model_server.requests[n]["messages"][-1]["content"] for n in (1, 2)]
    assert answers == [f"[error: cannot read notes.txt: {said}]"] * 2
    assert client.questions == [] and "fs/write_text_file" not in client.methods()
    assert notes.read_text() == "one\n"


def test_an_edit_applies_to_the_unsaved_text_and_goes_through_the_editor(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "one\ntwo\n")
    unsaved = "one\ntwo\nthree, typed but not saved\n"
    edit = {"path": "notes.txt", "edits": [{"old": "three, typed", "new": "THREE, typed"}]}
    model_server.enqueue(Reply(tool_calls=[ToolCall("edit_file", edit)]), Reply(text="Done."))
    client = EditorClient(buffers={str(notes): unsaved})

    one_turn(client, tmp_path, model_server.base_url, "edit", cwd=project, capabilities=FS)
    edited = "one\ntwo\nTHREE, typed but not saved\n"
    [(question, _)] = client.questions
    [shown] = diffs(question.content)  # the diff asked about is on the text that is replaced
    assert (shown.path, shown.old_text, shown.new_text) == (str(notes), unsaved, edited)
    assert ("fs/write_text_file", {"path": str(notes), "content": edited}) in client.calls
    assert notes.read_text() == "one\ntwo\n"  # the disk is the editor's to save, not mm-tui's
    [start] = client.starts()
    [made] = diffs(client.final(start.tool_call_id).content)
    assert (made.old_text, made.new_text) == (unsaved, edited)
    assert model_server.requests[1]["messages"][-1]["content"].startswith(
        "edited notes.txt: 1 edit applied, +1 -1 lines, first change at line 3"
    )


def test_write_file_writes_through_the_editor_and_never_the_disk(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "on disk\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "new\n"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "sub/fresh.txt", "content": "x\n"})]),
        Reply(text="Done."),
    )
    client = EditorClient(buffers={str(notes): "in the buffer\n"})

    one_turn(client, tmp_path, model_server.base_url, "write", cwd=project, capabilities=FS)
    first, second = client.questions
    [replaced] = diffs(first[0].content)
    assert (replaced.old_text, replaced.new_text) == ("in the buffer\n", "new\n")
    [created] = diffs(second[0].content)
    assert (created.old_text, created.new_text) == (None, "x\n")
    writes = [params for name, params in client.calls if name == "fs/write_text_file"]
    fresh = project / "sub" / "fresh.txt"
    assert writes == [
        {"path": str(notes), "content": "new\n"},
        {"path": str(fresh), "content": "x\n"},
    ]
    assert notes.read_text() == "on disk\n" and not fresh.exists()


def test_a_write_through_a_link_out_of_the_project_is_refused_before_any_question(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, _ = project_with(tmp_path, "readme.txt", "hello\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    (project / "link.txt").symlink_to(outside)
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "link.txt", "content": "pwned\n"})]),
        Reply(text="Refused."),
    )
    client = EditorClient()

    one_turn(client, tmp_path, model_server.base_url, "write", cwd=project, capabilities=FS)
    assert client.questions == [] and "fs/write_text_file" not in client.methods()
    assert outside.read_text() == "keep me\n"
    answer = model_server.requests[1]["messages"][-1]["content"]
    assert answer == (
        f"[error: {project / 'link.txt'} leads outside the project (to {outside}); the editor "
        "writes only its project's files, so nothing was written]"
    )


def test_a_file_swapped_for_a_link_after_the_question_is_not_handed_to_the_editor(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "one\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "two\n"})]),
        Reply(text="Stopped."),
    )

    class SwappingEditor(EditorClient):
        async def request_permission(self, *args: object, **kwargs: object) -> object:
            notes.unlink()
            notes.symlink_to(outside)  # between the question and the write
            return await super().request_permission(*args, **kwargs)  # type: ignore[arg-type]

    client = SwappingEditor()
    one_turn(client, tmp_path, model_server.base_url, "write", cwd=project, capabilities=FS)
    assert "fs/write_text_file" not in client.methods()
    assert outside.read_text() == "keep me\n"
    answer = model_server.requests[1]["messages"][-1]["content"]
    assert answer == (
        "[error: notes.txt not written: it became a symbolic link after the question was "
        "asked; nothing was written]"
    )


def test_bash_runs_in_an_editor_terminal_shown_in_its_call_and_answers_as_the_seed_says(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    command = 'echo "in $PWD, token [$DEPLOY_TOKEN]"; exit 3'
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": command})]), Reply(text="It failed.")
    )
    # The editor's own environment holds a secret; mm-tui's commands never see it.
    client = EditorClient(environment={"DEPLOY_TOKEN": "editor-secret-value"})

    one_turn(client, tmp_path, model_server.base_url, "run", cwd=project, capabilities=TERMINAL)
    assert client.methods()[0] == "terminal/create" and "terminal/release" in client.methods()
    created = client.calls[0][1]
    assert created["command"] == "env" and created["args"][0] == "-i"
    assert created["args"][-3:] == ["bash", "-c", command] and created["cwd"] == str(project)
    assert created["limit"] == 4 * (10_000 + 1)
    [start] = client.starts()
    shown = [
        c.terminal_id
        for u in client.progress(start.tool_call_id)
        for c in u.content or []
        if isinstance(c, TerminalToolCallContent)
    ]
    assert shown and set(shown) == {"term-1"}
    final = client.final(start.tool_call_id)
    assert final.status == "failed" and texts(final.content) == ["[exit code: exit status 3]"]
    assert model_server.requests[1]["messages"][-1]["content"] == (
        f"in {project}, token []\n[exit code: exit status 3]"
    )


def test_the_time_limit_kills_the_editor_terminal_and_says_the_seeds_line(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        # The call's own `timeout` (2 s) holds in the editor's terminal as in a local run.
        Reply(
            tool_calls=[
                ToolCall(
                    "bash", {"command": "echo started; sleep 317.25; echo never", "timeout": 2}
                )
            ]
        ),
        Reply(text="Too slow."),
    )
    client = EditorClient()

    one_turn(client, tmp_path, model_server.base_url, "wait", capabilities=TERMINAL)
    methods = client.methods()
    assert methods.index("terminal/kill") < methods.index("terminal/release")
    assert client.terminals["term-1"].process.returncode is not None
    # The editor killed its child (bash); the sleep bash started is ended by its mark.
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if _reads(p) == b"sleep\0317.25\0"]
    assert model_server.requests[1]["messages"][-1]["content"] == (
        "started\n[error: 2s timeout exceeded]"
    )


def test_without_the_capabilities_nothing_is_asked_of_the_editor(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "one\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("edit_file", {"path": "notes.txt", "edits": [
            {"old": "one", "new": "two"}]})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "cat notes.txt"})]),
        Reply(text="Done."),
    )  # fmt: skip
    client = EditorClient(buffers={str(notes): "unsaved\n"})

    one_turn(client, tmp_path, model_server.base_url, "edit", cwd=project)
    assert client.calls == []
    assert notes.read_text() == "two\n"
    assert model_server.requests[2]["messages"][-1]["content"] == "two\n"


def test_the_flags_keep_files_on_disk_and_commands_in_mm_tui(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    project, notes = project_with(tmp_path, "notes.txt", "one\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "two\n"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "cat notes.txt"})]),
        Reply(text="Done."),
    )
    client = EditorClient()

    flags = ("--no-client-fs", "--no-client-terminal")
    one_turn(client, tmp_path, model_server.base_url, "go", *flags, cwd=project, capabilities=BOTH)
    assert client.calls == [] and notes.read_text() == "two\n"
    assert model_server.requests[2]["messages"][-1]["content"] == "two\n"


def test_a_cancelled_turn_kills_the_editor_terminal_and_the_call_is_interrupted(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo started; sleep 300"})]),
        Reply(text="never asked"),
    )
    client = EditorClient()

    async def scenario() -> str:
        async with mm_acp(client, tmp_path, "--base-url", model_server.base_url, "--model", "m",
                          capabilities=TERMINAL) as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.ensure_future(
                conn.prompt(session_id=session.session_id, prompt=[text_block("wait")])
            )
            while "terminal/create" not in client.methods():  # bounded by the wait_for below
                await asyncio.sleep(0.05)
            await conn.cancel(session_id=session.session_id)
            return (await turn).stop_reason

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=115)) == "cancelled"
    methods = client.methods()
    assert methods.index("terminal/kill") < methods.index("terminal/release")
    [start] = client.starts()
    final = client.final(start.tool_call_id)
    assert final.status == "failed" and texts(final.content) == ["[interrupted by the user]"]
    assert len(model_server.requests) == 1  # the turn ended there


def _reads(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # the process ended meanwhile
        return b""
