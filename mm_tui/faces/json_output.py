"""Machine-readable headless output: `--output-format json` and `--output-format stream-json`.

`json` prints one object when the turn is over (the answer, every call, the counters, the usage,
the errors, the exit status); `stream-json` prints one object per event as it happens, then
that same object as its last line (`"type": "result"`). Lines are pure JSON with no raw control
character: C0 is escaped by the encoder, DEL, C1 and bidi controls here, so a terminal shows
them literally.
"""

from __future__ import annotations

import dataclasses
import json
import re
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
    TurnEnded,
    TurnSummary,
)

_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")  # and bidi (issue 11)
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

    def record(self, event: Event) -> None:
        if isinstance(event, AssistantMessageDone):
            self.answer = event.text  # the last message's text is the answer
        elif isinstance(event, ToolStarted):
            self._started[event.call_id] = dict(event.arguments)
        elif isinstance(event, ToolFinished):
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
        }


class JsonOutput:
    """`--output-format json`: silent while the turn runs, one object at the end."""

    def __init__(self, out: TextIO, *, stream: bool = False) -> None:
        self.out = out
        self.stream = stream
        self.report = TurnReport()

    def __call__(self, event: Event) -> None:
        if isinstance(event, PermissionRequest):
            event.future.set_result(PermissionAnswer.REJECT)  # nobody to ask in -p
        self.report.record(event)
        if self.stream:
            self._print(event_record(event))

    def finish(self, ended: TurnEnded, status: int) -> None:
        self._print(self.report.result(ended, status))

    def _print(self, payload: dict[str, Any]) -> None:
        print(json_line(payload), file=self.out, flush=True)
