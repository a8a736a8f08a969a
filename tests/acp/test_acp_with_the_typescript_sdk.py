"""`mm-tui acp` driven by an editor written with the official TypeScript SDK
(tests/acp/ts_client/client.mjs): a turn with a command, an edit and a question, then the
session loaded again. The SDK parses everything mm-tui sends with its own schemas, and every
message is checked here against ACP's published JSON schema, the one the SDK ships."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import clean_env

REPOSITORY = Path(__file__).resolve().parents[2]
SDK = REPOSITORY / ".ci" / "node" / "node_modules" / "@agentclientprotocol" / "sdk"
CLIENT = Path(__file__).parent / "ts_client" / "client.mjs"

#: What each message mm-tui sends must be, by the method it answers or calls.
RESPONSES = {
    "initialize": "InitializeResponse",
    "session/new": "NewSessionResponse",
    "session/load": "LoadSessionResponse",
    "session/prompt": "PromptResponse",
}
REQUESTS = {
    "session/request_permission": "RequestPermissionRequest",
    "fs/read_text_file": "ReadTextFileRequest",
    "fs/write_text_file": "WriteTextFileRequest",
    "terminal/create": "CreateTerminalRequest",
    "terminal/output": "TerminalOutputRequest",
    "terminal/wait_for_exit": "WaitForTerminalExitRequest",
    "terminal/kill": "KillTerminalRequest",
    "terminal/release": "ReleaseTerminalRequest",
}
NOTIFICATIONS = {"session/update": "SessionNotification"}


def violations(log: list[dict[str, Any]]) -> list[str]:
    """Each message from mm-tui that its schema refuses, said with the reason."""
    published = json.loads((SDK / "schema" / "v1" / "schema.json").read_text())
    schema = {"$schema": published["$schema"], "$defs": published["$defs"]}  # not its anyOf
    asked = {m["message"]["id"]: m["message"]["method"] for m in log if m["from"] == "client"
             and "method" in m["message"] and "id" in m["message"]}  # fmt: skip

    def check(definition: str, value: Any) -> list[str]:
        validator = Draft202012Validator({**schema, "$ref": f"#/$defs/{definition}"})
        return [f"{definition}: {error.message}" for error in validator.iter_errors(value)]

    found: list[str] = []
    for entry in log:
        if entry["from"] != "agent":
            continue
        message = entry["message"]
        if message.get("jsonrpc") != "2.0":
            found.append(f"not JSON-RPC 2.0: {message}")
        method = message.get("method")
        if method is None and "error" in message:
            found += check("Error", message["error"])
        elif method is None:
            found += check(RESPONSES[asked[message["id"]]], message.get("result"))
        elif "id" in message:
            found += check(REQUESTS[method], message.get("params"))
        else:
            found += check(NOTIFICATIONS[method], message.get("params"))
    return found


def run_editor(
    tmp_path: Path,
    base_url: str,
    capabilities: dict[str, Any],
    *flags: str,
    prompts: tuple[str, ...] = ("make the notes", "thanks"),
    load: bool = True,
) -> list[dict[str, Any]]:
    """The TypeScript editor's run of one scenario; its log of every message."""
    node = shutil.which("node")
    if node is None or not SDK.is_dir():
        pytest.fail("node or the ACP TypeScript SDK is missing: run .ci/install-test-tools")
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    log = tmp_path / "messages.jsonl"
    agent = [sys.executable, "-m", "mm_tui.cli", "acp", "--base-url", base_url, "--model", "m"]
    scenario = {
        "sdk": str(SDK / "dist" / "v1" / "stable" / "acp.js"),
        "agent": [*agent, *flags],
        "cwd": str(project),
        "log": str(log),
        "capabilities": capabilities,
        "prompts": list(prompts),
        "load": load,
        "answers": ["allow_once", "allow_once"],
    }
    (tmp_path / "scenario.json").write_text(json.dumps(scenario))
    finished = subprocess.run(
        [node, str(CLIENT), str(tmp_path / "scenario.json")],
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    return [json.loads(line) for line in log.read_text().splitlines()]


def enqueue_turns(server: ScriptedServer) -> None:
    server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "printf 'one\\ntwo\\n' > notes.txt"})]),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file", {"path": "notes.txt", "edits": [{"old": "two", "new": "three"}]}
                )
            ]
        ),  # fmt: skip
        Reply(text="Made **notes.txt**."),
        Reply(text="You are welcome."),
    )


def sent_methods(log: list[dict[str, Any]], side: str) -> list[str]:
    return [m["message"]["method"] for m in log if m["from"] == side and "method" in m["message"]]


def test_a_typescript_sdk_editor_without_capabilities_sees_only_valid_messages(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    enqueue_turns(model_server)
    log = run_editor(tmp_path, model_server.base_url, {})
    assert violations(log) == []
    assert (tmp_path / "project" / "notes.txt").read_text() == "one\nthree\n"
    agent_calls = sent_methods(log, "agent")
    assert agent_calls.count("session/request_permission") == 2
    assert not [m for m in agent_calls if m.startswith(("fs/", "terminal/"))]
    assert len(log) > 20  # the turn, its updates and the replay were all checked


def test_a_loaded_session_is_replayed_whole_before_the_load_is_answered(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    # The replay's updates were queued behind the answer: the editor got `{}` for its load
    # with one message shown, and the rest (or nothing, once it moved on) after.
    enqueue_turns(model_server)
    log = run_editor(tmp_path, model_server.base_url, {})
    load = next(m["message"]["id"] for m in log if m["message"].get("method") == "session/load")
    start = next(i for i, m in enumerate(log) if m["message"].get("method") == "session/load")
    answered = next(
        i for i, m in enumerate(log)
        if m["from"] == "agent" and m["message"].get("id") == load and "result" in m["message"]
    )  # fmt: skip
    replayed = [m["message"]["params"]["update"] for m in log[start:answered]
                if m["message"].get("method") == "session/update"]  # fmt: skip
    kinds = [u["sessionUpdate"] for u in replayed]
    assert kinds.count("user_message_chunk") == 2
    assert [u["toolCallId"] for u in replayed if u["sessionUpdate"] == "tool_call"] == [
        "call_001_1", "call_002_1"
    ]  # fmt: skip
    said = "".join(u["content"]["text"] for u in replayed
                   if u["sessionUpdate"] == "agent_message_chunk")  # fmt: skip
    assert said == "Made **notes.txt**.You are welcome."


FS_AND_TERMINAL = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}


def test_a_typescript_sdk_editor_with_fs_and_terminal_gets_valid_requests_and_the_notes(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    enqueue_turns(model_server)
    log = run_editor(tmp_path, model_server.base_url, FS_AND_TERMINAL)
    assert violations(log) == []
    assert (tmp_path / "project" / "notes.txt").read_text() == "one\nthree\n"
    agent_calls = sent_methods(log, "agent")
    for method in ("terminal/create", "terminal/wait_for_exit", "terminal/output",
                   "terminal/release", "fs/read_text_file", "fs/write_text_file"):  # fmt: skip
        assert method in agent_calls
    updates = [m["message"]["params"]["update"] for m in log
               if m["message"].get("method") == "session/update"
               and m["message"]["params"]["update"]["sessionUpdate"].startswith("tool_call")]  # fmt: skip
    shown = {c["terminalId"] for u in updates for c in u.get("content") or []
             if c.get("type") == "terminal"}  # fmt: skip
    assert shown == {"term-0"}  # the bash call embeds its terminal


def test_a_typescript_sdk_editors_terminal_is_killed_at_the_time_limit(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo started; sleep 300"})]),
        Reply(text="Too slow."),
    )
    log = run_editor(
        tmp_path, model_server.base_url, FS_AND_TERMINAL, prompts=("wait",), load=False
    )
    assert violations(log) == []
    agent_calls = sent_methods(log, "agent")
    assert agent_calls.index("terminal/kill") < agent_calls.index("terminal/release")
    assert model_server.requests[1]["messages"][-1]["content"] == (
        "started\n[error: 30s timeout exceeded]"
    )
