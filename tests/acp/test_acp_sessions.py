"""`mm-tui acp`: cancel (mid-command, mid-question), load, the lsp tool's kinds, bad input."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from acp import RequestError
from acp.schema import ToolCallProgress

from mm_tui.agent.session import SessionStore
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.acp.client import RecordingClient, diffs, mm_acp, prompt, texts
from tests.waiting import await_until


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=115))


def test_cancel_mid_command_ends_its_process_group_and_the_turn(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo $$ > pid.txt; sleep 30"})]),
        Reply(text="After the interruption."),
    )
    client = RecordingClient()
    pid_file = tmp_path / "pid.txt"

    async def scenario() -> tuple[str, str]:
        async with mm_acp(client, tmp_path, "--yolo", "--base-url", model_server.base_url,
                          "--model", "m") as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.create_task(prompt(conn, session.session_id, "wait"))
            started = lambda: pid_file.exists() and pid_file.read_text().strip() != ""  # noqa: E731
            await await_until(started, "the command's pid", timeout=90, interval=0.05)
            running = lambda: [u for u in client.updates if isinstance(u, ToolCallProgress)]  # noqa: E731
            in_progress = lambda us: any(u.status == "in_progress" for u in us)  # noqa: E731
            await await_until(
                running, "a tool call in progress", until=in_progress, timeout=90, interval=0.05
            )
            await conn.cancel(session_id=session.session_id)
            first = await turn
            second = await prompt(conn, session.session_id, "go on")  # the history stays valid
            return first, second

    assert run(scenario()) == ("cancelled", "end_turn")
    [start] = client.starts()
    final = client.final(start.tool_call_id)
    assert final.status == "failed"
    assert texts(final.content)[0].endswith("[interrupted by the user]")
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
    assert "After the interruption." in client.message_text()


def test_cancel_while_the_client_is_asking_ends_the_turn_and_runs_nothing(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "touch ran.txt"})]))
    client = RecordingClient(answer=None)  # keeps the question open until released

    async def scenario() -> str:
        async with mm_acp(
            client, tmp_path, "--base-url", model_server.base_url, "--model", "m"
        ) as conn:
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.create_task(prompt(conn, session.session_id, "touch"))
            await asyncio.wait_for(client.asked.wait(), 30)
            await conn.cancel(session_id=session.session_id)
            client.release.set()  # the client answers `cancelled`, as the protocol asks
            return await turn

    assert run(scenario()) == "cancelled"
    [start] = client.starts()
    assert client.final(start.tool_call_id).status == "failed"
    assert not (tmp_path / "ran.txt").exists()


def test_load_sends_the_saved_conversation_back_then_goes_on_from_it(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(text="Listing.", tool_calls=[ToolCall("bash", {"command": "echo listed"})]),
        Reply(text="First answer."),
        Reply(text="Second answer."),
    )
    first, second = RecordingClient(), RecordingClient()
    flags = ("--yolo", "--base-url", model_server.base_url, "--model", "m")

    async def scenario() -> tuple[str, str]:
        async with mm_acp(first, tmp_path, *flags) as conn:
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await prompt(conn, session.session_id, "list things")
        async with mm_acp(second, tmp_path, *flags) as conn:
            await conn.load_session(cwd=str(tmp_path), session_id=session.session_id,
                                    mcp_servers=[])  # fmt: skip
            replayed = second.user_text()
            return session.session_id, replayed + "|" + await prompt(
                conn, session.session_id, "more"
            )

    session_id, said = run(scenario())
    assert said == "list things|end_turn"
    assert second.message_text().startswith("Listing.First answer.")
    [start] = second.starts()
    assert start.kind == "execute" and texts(second.final(start.tool_call_id).content) == [
        "listed\n"
    ]
    sent = model_server.requests[2]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert SessionStore(tmp_path / "data/mm/sessions").locate(session_id).is_file()


def test_bad_sessions_are_refused_with_a_protocol_error(tmp_path: Path) -> None:
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken/.mm.yaml").write_text("maxOutput: many\n")
    client = RecordingClient()

    async def scenario() -> list[str]:
        errors: list[str] = []
        async with mm_acp(client, tmp_path, "--model", "m") as conn:
            for call in (
                conn.load_session(cwd=str(tmp_path), session_id="nope", mcp_servers=[]),
                conn.new_session(cwd=str(tmp_path / "broken"), mcp_servers=[]),
                conn.new_session(cwd="relative/dir", mcp_servers=[]),
            ):
                with pytest.raises(RequestError) as raised:
                    await call
                errors.append(f"{raised.value.code} {raised.value}")
        return errors

    missing, config, relative = run(scenario())
    assert missing.startswith("-32002")
    assert "config error in" in config and str(tmp_path / "broken/.mm.yaml") in config
    assert relative.startswith("-32602")


@pytest.fixture
def python_project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "main.py").write_text("def greet():\n    return 1\n\n\nprint(greet())\n")
    pylsp = f"lsp:\n  servers:\n    pylsp:\n      command: [{sys.executable}, -m, pylsp]\n"
    (project / ".mm.yaml").write_text(pylsp + "      extensions: [.py]\n")
    return project


def test_lsp_navigation_is_read_and_rename_is_an_edit_that_asks(
    python_project: Path, model_server: ScriptedServer
) -> None:
    rename = {"action": "rename", "path": "main.py", "symbol": "greet", "new_name": "hello"}
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("lsp", {"action": "definition", "path": "main.py",
                                           "symbol": "greet", "line": 5})]),
        Reply(tool_calls=[ToolCall("lsp", rename)]),
        Reply(tool_calls=[ToolCall("lsp", rename)]),
        Reply(text="Renamed."),
    )  # fmt: skip
    client = RecordingClient(answer=["reject_once", "allow_once"])  # refuse, then allow
    main = python_project / "main.py"

    async def scenario() -> str:
        async with mm_acp(client, python_project.parent, "--base-url", model_server.base_url,
                          "--model", "m") as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(python_project), mcp_servers=[])
            return await prompt(conn, session.session_id, "rename")

    assert run(scenario()) == "end_turn"
    definition, refused, renamed = client.starts()
    assert definition.kind == "read" and definition.title == "lsp definition main.py:5 greet"
    [location] = definition.locations or []
    assert (location.path, location.line) == (str(main), 5)
    assert texts(client.final(definition.tool_call_id).content) == ["main.py:1:5  def greet():"]
    assert refused.kind == "edit" and renamed.kind == "edit"
    final = client.final(refused.tool_call_id)
    assert final.status == "failed" and texts(final.content) == ["[rename rejected by the user]"]
    old = "def greet():\n    return 1\n\n\nprint(greet())\n"
    new = "def hello():\n    return 1\n\n\nprint(hello())\n"
    for question, _ in client.questions:  # the question shows the change before it is made
        [planned] = diffs(question.content)
        assert (planned.path, planned.old_text, planned.new_text) == (str(main), old, new)
    [made] = diffs(client.final(renamed.tool_call_id).content)
    assert (made.path, made.old_text, made.new_text) == (str(main), old, new)
    assert main.read_text() == new
