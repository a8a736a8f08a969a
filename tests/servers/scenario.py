"""The conversation every face holds with every emulator of the zoo: the model reads a file
with a tool call, then answers from what it read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scripted_server import Reply, ToolCall
from tests.servers.zoo import Emulator

NOTES = "the answer is 42\n"
QUESTION = "What do the notes say?"
FIRST = "Let me read the notes."
ANSWER = "The notes say **the answer is 42**."
#: How a model writes the call when the server gives it no tools (Hermes/Qwen's own markup).
WRITTEN_CALL = (
    '\n<tool_call>\n{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>'
)


def make_project(root: Path) -> Path:
    project = root / "project"
    project.mkdir()
    (project / "notes.txt").write_text(NOTES, encoding="utf-8")
    return project


def script(emulator: Emulator) -> None:
    """A call to read_file (native, or written in the text where the server drops tools),
    then the answer."""
    if emulator.native_tools:
        call = ToolCall("read_file", {"path": "notes.txt"})
        first = Reply(text=FIRST, tool_calls=[call])
    else:
        first = Reply(text=FIRST + WRITTEN_CALL)
    emulator.enqueue(first, Reply(text=ANSWER))


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else json.dumps(content)


def assert_the_file_reached_the_model(emulator: Emulator) -> None:
    """Two requests; the second carries the call and its result, after the question."""
    assert len(emulator.requests) == 2, [r.get("messages", [])[-1:] for r in emulator.requests]
    first, second = emulator.requests
    assert QUESTION in _text(first["messages"][-1])
    assert first["model"] == emulator.model
    later = second["messages"][len(first["messages"]) :]
    assert later, "the second request adds nothing to the first"
    assert later[0]["role"] == "assistant"
    assert any("the answer is 42" in _text(m) for m in later[1:]), later
    if emulator.native_tools:
        [call] = later[0]["tool_calls"]
        assert call["function"]["name"] == "read_file"
        assert json.loads(call["function"]["arguments"]) == {"path": "notes.txt"}
        assert later[1]["role"] == "tool" and later[1]["tool_call_id"] == call["id"]
