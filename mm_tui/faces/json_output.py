"""Machine-readable headless output: `--output-format json` and `--output-format stream-json`.

`json` prints one object when the turn is over (the session id and model, the answer, every
call, the counters, the usage, the errors, the exit status); `stream-json` prints a
`session_started` object first (session id, model, tools), then one object per event as it
happens, each with its `time`, then that same result object as its last line
(`"type": "result"`). A permission question is rejected because nobody is there to answer:
that rejection says so (`"rejected_by": "nobody_to_ask"`), never passing for a person's. Lines are pure JSON with no raw control
character: C0 is escaped by the encoder, DEL, C1 and bidi controls here, so a terminal shows
them literally.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import UTC, datetime
from enum import Enum
from typing import Any, TextIO

from mm_tui.agent.events import (
    AssistantMessageDone,
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    ToolFinished,
    ToolKind,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnSummary,
)

#: Who rejected a call in `-p`: mm-tui, since nobody is there to answer the question.
NOBODY_TO_ASK = "nobody_to_ask"

_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # and bidi
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def json_line(payload: dict[str, Any]) -> str:
    """One line of JSON, UTF-8 kept readable, with no raw control character in it."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _plain(value: Any) -> Any:
    if isinstance(value, PermissionAnswer):
        return {"a": "allow_once", "s": "allow_session", "r": "reject"}[value.value]
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, float):
        return round(value, 3)
    return value


def now_iso() -> str:
    """The time of a line: ISO 8601 in UTC, to the millisecond."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def event_record(event: Event) -> dict[str, Any]:
    """`{"type": "tool_finished", "call_id": …}`: the event's fields, snake_case type first."""
    record: dict[str, Any] = {"type": _CAMEL.sub("_", type(event).__name__).lower()}
    for field in dataclasses.fields(event):
        if field.name != "future":
            record[field.name] = _plain(getattr(event, field.name))
    return record


class TurnReport:
    """Collects one headless turn for its final JSON object."""

    def __init__(self) -> None:
        self.answer = ""
        self.calls: list[dict[str, Any]] = []
        self._started: dict[str, dict[str, Any]] = {}
        self.notices: list[dict[str, str]] = []
        self.summary: TurnSummary | None = None
        self.session: dict[str, Any] = {}
        self.denied: dict[str, dict[str, Any]] = {}

    def record(self, event: Event) -> None:
        if isinstance(event, AssistantMessageDone):
            self.answer = event.text  # the last message's text is the answer
        elif isinstance(event, ToolStarted):
            self._started[event.call_id] = dict(event.arguments)
        elif isinstance(event, PermissionRequest):
            self.denied[event.call_id] = {
                "call_id": event.call_id,
                "tool": event.name,
                "detail": event.detail,
                "rejected_by": NOBODY_TO_ASK,
            }
        elif isinstance(event, ToolFinished):
            denied = event.status is ToolStatus.REJECTED and event.call_id in self.denied
            self.calls.append(
                {
                    "id": event.call_id,
                    "name": event.name,
                    "title": event.title,
                    "arguments": self._started.pop(event.call_id, {}),
                    "status": event.status.value,
                    "duration": round(event.duration, 3),
                    "output": event.output,
                    "diff": event.diff,
                    **({"rejected_by": NOBODY_TO_ASK} if denied else {}),
                }
            )
        elif isinstance(event, Notice):
            self.notices.append({"level": event.level, "text": event.text})
        elif isinstance(event, TurnSummary):
            self.summary = event

    def result(self, ended: TurnEnded, status: int) -> dict[str, Any]:
        summary = self.summary or TurnSummary(0, 0, 0, 0, 0.0, 0, 0)
        errors = [n["text"] for n in self.notices if n["level"] == "error"]
        if ended.error and ended.error not in errors:
            errors.append(ended.error)
        return {
            "type": "result",
            **self.session,
            "time": now_iso(),
            "exit_status": status,
            "reason": ended.reason,
            "answer": self.answer,
            "calls": self.calls,
            "counters": {kind.value: summary.count(kind) for kind in ToolKind},
            "duration": round(summary.duration, 3),
            "usage": {
                "prompt_tokens": summary.prompt_tokens,
                "completion_tokens": summary.completion_tokens,
            },
            "errors": errors,
            "notices": self.notices,
            "permission_denials": list(self.denied.values()),
        }


class JsonOutput:
    """`--output-format json`: silent while the turn runs, one object at the end."""

    def __init__(self, out: TextIO, *, stream: bool = False) -> None:
        self.out = out
        self.stream = stream
        self.report = TurnReport()

    def begin(
        self,
        *,
        session_id: str,
        model: str | None,
        tools: list[str],
        cwd: str,
        ended: bool = False,
    ) -> None:
        """The session's identity: the first line of `stream-json`, and keys of the result
        (at the end again: the model is known once the server named it)."""
        self.report.session = {"session_id": session_id, "model": model}
        if not ended and self.stream:
            self._print(
                {"type": "session_started", **self.report.session, "tools": tools, "cwd": cwd}
            )

    def __call__(self, event: Event) -> None:
        self.report.record(event)
        if self.stream:
            record = event_record(event)
            if isinstance(event, PermissionRequest):
                record["rejected_by"] = NOBODY_TO_ASK  # answered by mm-tui, not by a person
            self._print(record)

    def finish(self, ended: TurnEnded, status: int) -> None:
        self._print(self.report.result(ended, status))

    def _print(self, payload: dict[str, Any]) -> None:
        if "time" not in payload:
            payload = {**payload, "time": now_iso()}
        print(json_line(payload), file=self.out, flush=True)
