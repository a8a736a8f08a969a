"""What a session is, whatever file holds it: the dataclass, its id, the v1 JSON file that
older mm-tui versions wrote (read, never written), and the document shape replay reads.

The API key is never part of a session: nothing here receives it.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from mm_tui.agent.messages import Message, read_back
from mm_tui.agent.tool_record import ToolRecord

#: The JSON file of mm-tui before the append-only log (SPEC §8 as first written).
V1 = 1
UNFINISHED_RESULT = "[interrupted: mm-tui stopped before this call had a result]"


class ErrorEntry(TypedDict):
    """One entry of a session's `errors`: when, where (the model, a tool…), the line said."""

    time: str
    where: str
    message: str


def read_back_error(value: Mapping[str, object]) -> ErrorEntry:
    """An `errors` entry of a session file, taken as written (its keys are not checked)."""
    return cast("ErrorEntry", cast("object", value))


class SessionError(Exception):
    """A session file that cannot be used, phrased as the one line the person reads."""


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@dataclass
class Session:
    """One conversation. `messages` is what the model is sent (after compaction: the summary
    and what follows); `history` is every message ever said, for replay and export."""

    id: str
    model: str
    base_url: str
    cwd: str
    created: float = field(default_factory=time.time)
    messages: list[Message] = field(default_factory=list)
    history: list[Message] = field(default_factory=list)
    tool_meta: dict[str, ToolRecord] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0}
    )
    errors: list[ErrorEntry] = field(default_factory=list)
    forked_from: str = ""

    def __post_init__(self) -> None:
        if not self.history and self.messages:
            self.history = list(self.messages)

    def to_json(self) -> dict[str, Any]:
        """The whole session as one document in the v1 shape, every message of the history
        included: what `--replay`, `/export` and tests read."""
        return {
            "version": V1,
            "id": self.id,
            "model": self.model,
            "base_url": self.base_url,
            "cwd": self.cwd,
            "created": self.created,
            "messages": self.history,
            "tool_meta": {call_id: record.to_json() for call_id, record in self.tool_meta.items()},
            "counters": self.counters,
            "usage": self.usage,
            "errors": self.errors,
        }

    def add_error(self, where: str, message: str) -> ErrorEntry:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        error: ErrorEntry = {"time": stamp, "where": where, "message": message}
        self.errors.append(error)
        return error


def answer_unfinished_calls(messages: list[Message]) -> int:
    """Give a result to every tool call left without one (mm-tui was killed mid-tool), so the
    history is valid for the next request. Returns how many results were added."""
    added = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        calls = message.get("tool_calls")
        if message.get("role") != "assistant" or not calls:
            continue
        answered: set[str | None] = set()
        while index < len(messages) and messages[index].get("role") == "tool":
            answered.add(messages[index].get("tool_call_id"))
            index += 1
        for call in calls:
            if call.get("id") not in answered:
                result: Message = {
                    "role": "tool",
                    "tool_call_id": call.get("id"),  # a file's call may lack it: None
                    "content": UNFINISHED_RESULT,
                }
                messages.insert(index, result)
                index += 1
                added += 1
    return added


def read_v1(path: Path) -> Session:
    """Load and check a v1 session file; never modifies it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionError(f"no session file {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SessionError(f"session file {path} is unreadable or corrupt ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise SessionError(f"session file {path} is corrupt (no messages list)")
    version = data.get("version")
    if not isinstance(version, int) or version > V1:
        raise SessionError(
            f"session file {path} is version {version!r}, newer than this mm-tui "
            f"understands ({V1}); upgrade mm-tui to resume it"
        )
    # the file's objects are taken as messages; `answer_unfinished_calls` mends their order
    messages = [read_back(m) for m in data["messages"] if isinstance(m, dict)]
    return Session(
        id=str(data.get("id") or path.stem),
        model=str(data.get("model") or ""),
        base_url=str(data.get("base_url") or ""),
        cwd=str(data.get("cwd") or ""),
        created=float(data.get("created") or time.time()),
        messages=messages,
        history=list(messages),
        tool_meta={
            str(call_id): ToolRecord.from_json(record)
            for call_id, record in dict(data.get("tool_meta") or {}).items()
        },
        counters=dict(data.get("counters") or {}),
        usage=dict(data.get("usage") or {"prompt_tokens": 0, "completion_tokens": 0}),
        errors=list(data.get("errors") or []),
    )
