"""Sessions (SPEC §8): one JSON file per conversation, rewritten atomically after each message.

The API key is never part of a session: nothing here receives it.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm_tui.agent.tool_record import ToolRecord
from mm_tui.support.atomic_write import write_atomically
from mm_tui.support.paths import data_dir

SESSION_VERSION = 1


class SessionError(Exception):
    """A session file that cannot be used, phrased as the one line the person reads."""


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/mm/sessions` (SPEC §8)."""
    return data_dir(env) / "sessions"


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


@dataclass
class Session:
    """Everything a session file holds; `messages` are in the OpenAI chat format."""

    id: str
    model: str
    base_url: str
    cwd: str
    created: float = field(default_factory=time.time)
    messages: list[dict[str, Any]] = field(default_factory=list)
    tool_meta: dict[str, ToolRecord] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=dict)
    usage: dict[str, int] = field(
        default_factory=lambda: {"prompt_tokens": 0, "completion_tokens": 0}
    )
    errors: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": SESSION_VERSION,
            "id": self.id,
            "model": self.model,
            "base_url": self.base_url,
            "cwd": self.cwd,
            "created": self.created,
            "messages": self.messages,
            "tool_meta": {call_id: record.to_json() for call_id, record in self.tool_meta.items()},
            "counters": self.counters,
            "usage": self.usage,
            "errors": self.errors,
        }

    def add_error(self, where: str, message: str) -> None:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        self.errors.append({"time": stamp, "where": where, "message": message})


class SessionStore:
    """Reads and writes session files under one directory."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or sessions_dir()

    def path_for(self, session_id: str) -> Path:
        return self.directory / f"{Path(session_id).name}.json"

    def save(self, session: Session) -> Path:
        path = self.path_for(session.id)
        text = json.dumps(session.to_json(), ensure_ascii=False, indent=1)
        write_atomically(path, text.encode("utf-8"), durable=True, new_file_mode=0o600)
        return path

    def load(self, session_id: str) -> Session:
        path = self.path_for(session_id) if not session_id.endswith(".json") else Path(session_id)
        return load_session_file(path)

    def latest_for(self, cwd: Path) -> Session | None:
        """The most recently written session started in `cwd` (for --continue)."""
        if not self.directory.is_dir():
            return None
        files = sorted(self.directory.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for path in files:
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            if isinstance(data, dict) and data.get("cwd") == str(cwd):
                return load_session_file(path)
        return None


UNFINISHED_RESULT = "[interrupted: mm-tui stopped before this call had a result]"


def answer_unfinished_calls(messages: list[dict[str, Any]]) -> int:
    """Give a result to every tool call left without one (mm-tui was killed mid-tool), so the
    history is valid for the next request. Returns how many results were added."""
    added = 0
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.get("role") != "assistant" or not message.get("tool_calls"):
            continue
        answered = set()
        while index < len(messages) and messages[index].get("role") == "tool":
            answered.add(messages[index].get("tool_call_id"))
            index += 1
        for call in message["tool_calls"]:
            if call.get("id") not in answered:
                result = {
                    "role": "tool",
                    "tool_call_id": call.get("id"),
                    "content": UNFINISHED_RESULT,
                }
                messages.insert(index, result)
                index += 1
                added += 1
    return added


def load_session_file(path: Path) -> Session:
    """Load and check a session file; never modifies it."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SessionError(f"no session file {path}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise SessionError(f"session file {path} is unreadable or corrupt ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("messages"), list):
        raise SessionError(f"session file {path} is corrupt (no messages list)")
    version = data.get("version")
    if not isinstance(version, int) or version > SESSION_VERSION:
        raise SessionError(
            f"session file {path} is version {version!r}, newer than this mm-tui "
            f"understands ({SESSION_VERSION}); upgrade mm-tui to resume it"
        )
    return Session(
        id=str(data.get("id") or path.stem),
        model=str(data.get("model") or ""),
        base_url=str(data.get("base_url") or ""),
        cwd=str(data.get("cwd") or ""),
        created=float(data.get("created") or time.time()),
        messages=list(data["messages"]),
        tool_meta={
            str(call_id): ToolRecord.from_json(record)
            for call_id, record in dict(data.get("tool_meta") or {}).items()
        },
        counters=dict(data.get("counters") or {}),
        usage=dict(data.get("usage") or {"prompt_tokens": 0, "completion_tokens": 0}),
        errors=list(data.get("errors") or []),
    )
