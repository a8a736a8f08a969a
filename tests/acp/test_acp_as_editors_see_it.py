"""`mm-tui acp` as Zed and Toad see it: a cancel is not a rejection, a loaded session has no
window line and keeps its diffs, MCP servers are not silently dropped, a new file's diff says
`"oldText": null` on the wire."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp.schema import McpServerStdio

from mm_tui.agent.tools.base import INTERRUPTED
from mm_tui.replay import END_OF_REPLAY
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.acp.client import RecordingClient, diffs, mm_acp, prompt, texts
from tests.faces.helpers import clean_env
from tests.waiting import await_until


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, timeout=115))


def test_a_turn_cancelled_at_its_question_tells_the_model_interrupted_not_rejected(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "touch ran.txt"})]),
        Reply(text="Fine."),
    )
    client = RecordingClient(answer=None)  # keeps the question open until released

    async def scenario() -> tuple[str, str]:
        async with mm_acp(
            client, tmp_path, "--base-url", model_server.base_url, "--model", "m"
        ) as conn:
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            turn = asyncio.create_task(prompt(conn, session.session_id, "touch"))
            await asyncio.wait_for(client.asked.wait(), 30)
            client.release.set()  # the client answers `cancelled` first, then cancels
            await conn.cancel(session_id=session.session_id)
            first = await turn
            return first, await prompt(conn, session.session_id, "go on")

    assert run(scenario()) == ("cancelled", "end_turn")
    [start] = client.starts()
    assert texts(client.final(start.tool_call_id).content) == [INTERRUPTED]
    tool_results = [m for m in model_server.requests[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == [INTERRUPTED]
    assert not (tmp_path / "ran.txt").exists()


def test_a_loaded_session_has_no_window_line_and_its_edits_keep_their_diffs(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\nthree\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "new.txt", "content": "fresh\n"})]),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"path": "notes.txt", "edits": [{"old": "two\n", "new": "TWO\n"}]},
                )
            ]
        ),
        Reply(text="Both done."),
    )
    first, second = RecordingClient(), RecordingClient()
    flags = ("--yolo", "--base-url", model_server.base_url, "--model", "m")

    async def scenario() -> None:
        async with mm_acp(first, tmp_path, *flags) as conn:
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
            await prompt(conn, session.session_id, "edit")
        (tmp_path / "notes.txt").write_text("rewritten since\n")  # the disk moved on
        (tmp_path / "new.txt").unlink()
        async with mm_acp(second, tmp_path, *flags) as conn:
            await conn.load_session(cwd=str(tmp_path), session_id=session.session_id,
                                    mcp_servers=[])  # fmt: skip
            answer = lambda: "Both done." in second.message_text()  # noqa: E731 - the last text
            await await_until(answer, "the replay's last answer", timeout=30, interval=0.05)

    run(scenario())
    assert END_OF_REPLAY not in second.message_text()
    assert "Both done." in second.message_text()
    written, edited = second.starts()
    [created] = diffs(second.final(written.tool_call_id).content)
    assert created.path == str(tmp_path / "new.txt") and created.old_text is None
    assert created.new_text == "fresh\n"
    [changed] = diffs(second.final(edited.tool_call_id).content)
    assert changed.path == str(tmp_path / "notes.txt")
    assert "two\n" in (changed.old_text or "") and "TWO\n" in changed.new_text
    assert "two\n" not in changed.new_text


def test_mcp_servers_given_by_the_editor_are_said_to_be_unused(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="Hello."))
    client = RecordingClient()
    server = McpServerStdio(name="github-tools", command="/usr/bin/true", args=[], env=[])

    async def scenario() -> None:
        async with mm_acp(
            client, tmp_path, "--base-url", model_server.base_url, "--model", "m"
        ) as conn:
            session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[server])
            await prompt(conn, session.session_id, "hi")

    run(scenario())
    [(level, said)] = client.notices()
    assert level == "warning" and "does not use MCP servers" in said and "github-tools" in said
    assert client.message_text() == "Hello."


def rpc(process: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((json.dumps(message) + "\n").encode())
    process.stdin.flush()


def test_a_new_files_diff_says_old_text_null_on_the_wire(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    """Read as bytes, not through an SDK that would read a missing key and null alike."""
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "born.txt", "content": "hi\n"})]),
        Reply(text="ok"),
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "mm_tui.cli", "acp", "--yolo", "--base-url",
         model_server.base_url, "--model", "m"],
        cwd=tmp_path, env=clean_env(tmp_path),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdout is not None
    lines: list[dict[str, Any]] = []
    try:
        rpc(process, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": 1, "clientCapabilities": {}}})  # fmt: skip
        rpc(process, {"jsonrpc": "2.0", "id": 2, "method": "session/new",
                      "params": {"cwd": str(tmp_path), "mcpServers": []}})  # fmt: skip
        while not any(line.get("id") == 2 for line in lines):
            lines.append(json.loads(process.stdout.readline()))
        session_id = next(line for line in lines if line.get("id") == 2)["result"]["sessionId"]
        rpc(process, {"jsonrpc": "2.0", "id": 3, "method": "session/prompt",
                      "params": {"sessionId": session_id,
                                 "prompt": [{"type": "text", "text": "make it"}]}})  # fmt: skip
        while not any(line.get("id") == 3 for line in lines):
            lines.append(json.loads(process.stdout.readline()))
    finally:
        process.kill()
        process.wait()
    diff_contents = [
        content
        for line in lines
        if line.get("method") == "session/update"
        and line["params"]["update"]["sessionUpdate"] in ("tool_call", "tool_call_update")
        for content in line["params"]["update"].get("content") or []
        if content.get("type") == "diff"
    ]
    assert diff_contents, lines
    for content in diff_contents:
        assert "oldText" in content and content["oldText"] is None
        assert content["newText"] == "hi\n"
