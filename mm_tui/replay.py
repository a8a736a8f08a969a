"""`--replay FILE` and `--demo`: a saved session turned back into the core's events, timed.

The window plays them exactly as it shows a live turn, with no model: user messages become
TurnStarted, answers stream as TextDelta pieces, reasoning as ReasoningDelta, tool calls become
ToolStarted/ToolFinished (status, duration and diff from `tool_meta`), `errors` become notices,
and every turn ends with its TurnSummary.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WAITING_FOR_MODEL,
    WRITING,
    AssistantMessageDone,
    Notice,
    PermissionAnswer,
    PermissionResolved,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolKind,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    running_state,
)
from mm_tui.agent.session import SessionError, read_session_document
from mm_tui.agent.session_log import SUFFIX as SESSION_LOG_SUFFIX
from mm_tui.agent.tool_record import ToolRecord

TimedEvent = tuple[float, Any]  # (seconds to wait before it, the event)
END_OF_REPLAY = "end of the replay — Ctrl+Q quits"


class ReplayError(Exception):
    """A session file that cannot be replayed, said in one line."""


@dataclass(frozen=True)
class Pace:
    """How fast a replay goes; `speed=0` plays everything at once (tests)."""

    chunk_chars: int = 6
    chunk_seconds: float = 0.015
    step_seconds: float = 0.35
    longest_tool_seconds: float = 1.2
    speed: float = 1.0

    def wait(self, seconds: float) -> float:
        return seconds * self.speed


def demo_path() -> Path:
    """The demo session bundled with the package."""
    return Path(__file__).parent / "demo" / "demo.json"


def load_replay(path: Path, pace: Pace | None = None) -> tuple[list[TimedEvent], dict[str, str]]:
    """The timed events of a session file, and its model and server for the top line."""
    if Path(path).suffix == SESSION_LOG_SUFFIX:  # an append-only log: its whole history
        try:
            document = read_session_document(Path(path))
        except SessionError as error:
            raise ReplayError(str(error)) from None
        meta = {key: str(document.get(key) or "") for key in ("model", "base_url", "cwd")}
        return session_events(document, pace or Pace()), meta
    try:
        session = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"cannot read {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise ReplayError(f"{path} is not JSON: {error}") from None
    if not isinstance(session, dict) or not isinstance(session.get("messages"), list):
        raise ReplayError(f"{path} is not a session file (no messages list)")
    meta = {key: str(session.get(key) or "") for key in ("model", "base_url", "cwd")}
    return session_events(session, pace or Pace()), meta


@dataclass
class _Turn:
    """The messages of one user turn, and what the replay needs to end it."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ended_abnormally(self) -> bool:
        """A turn that ends on anything but an assistant answer was cut by an error."""
        last = self.messages[-1] if self.messages else {}
        return not (last.get("role") == "assistant" and not last.get("tool_calls"))


def _split_turns(messages: list[dict[str, Any]]) -> list[_Turn]:
    turns: list[_Turn] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") == "system":
            continue
        if message.get("role") == "user" or not turns:
            turns.append(_Turn())
        turns[-1].messages.append(message)
    return turns


def _place_errors(turns: list[_Turn], errors: list[Any]) -> None:
    """Errors go to the turn they name (`turn`, 0-based), else to cut turns in order."""
    cut = [turn for turn in turns if turn.ended_abnormally]
    for error in errors:
        if not isinstance(error, dict) or not turns:
            continue
        index = error.get("turn")
        if isinstance(index, int) and 0 <= index < len(turns):
            turns[index].errors.append(error)
        elif cut:
            cut.pop(0).errors.append(error)
        else:
            turns[-1].errors.append(error)


def session_events(session: dict[str, Any], pace: Pace) -> list[TimedEvent]:
    """Every event of the session, in order, each with the pause before it."""
    turns = _split_turns(session["messages"])
    _place_errors(turns, session.get("errors") or [])
    usage = session.get("usage") or {}
    sizes = [sum(len(str(m.get("content") or "")) for m in turn.messages) for turn in turns]
    total = sum(sizes) or 1
    events: list[TimedEvent] = []
    for turn, size in zip(turns, sizes, strict=True):
        share = size / total
        tokens = (
            round(int(usage.get("prompt_tokens", 0)) * share),
            round(int(usage.get("completion_tokens", 0)) * share),
        )
        events += _turn_events(turn, session.get("tool_meta") or {}, tokens, pace)
    events.append((pace.wait(pace.step_seconds), Notice("info", END_OF_REPLAY)))
    return events


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _turn_events(
    turn: _Turn, tool_meta: dict[str, Any], tokens: tuple[int, int], pace: Pace
) -> list[TimedEvent]:
    events: list[TimedEvent] = []
    step, chunk = pace.wait(pace.step_seconds), pace.wait(pace.chunk_seconds)
    counts: Counter[ToolKind] = Counter()
    duration = 0.0
    names: dict[str, str] = {}
    arguments: dict[str, dict[str, Any]] = {}
    for message in turn.messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            events += [(step, TurnStarted(content)), (0.0, SpinnerChanged(WAITING_FOR_MODEL))]
        elif role == "assistant":
            reasoning = str(message.get("reasoning_content") or message.get("reasoning") or "")
            events.append((step, SpinnerChanged(THINKING if reasoning else WRITING)))
            events += [(chunk, ReasoningDelta(p)) for p in _chunks(reasoning, pace.chunk_chars)]
            if content:
                events.append((0.0, SpinnerChanged(WRITING)))
                events += [(chunk, TextDelta(p)) for p in _chunks(content, pace.chunk_chars)]
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id", "")] = str(function.get("name") or "tool")
                arguments[call.get("id", "")] = _parsed(function.get("arguments"))
            if message.get("tool_calls"):
                events.append((step, SpinnerChanged(COMPOSING_TOOL_CALL)))
            events.append((0.0, AssistantMessageDone(content, reasoning)))
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            name = names.get(call_id, "tool")
            record = ToolRecord.from_json(tool_meta.get(call_id))
            duration += record.duration
            kind = record.counted_kind(name)
            if kind is not None:
                counts[kind] += 1
            events += _tool_events(call_id, name, arguments.get(call_id, {}), record, content, pace)
            events.append((0.0, SpinnerChanged(WAITING_FOR_MODEL)))
    for error in turn.errors:
        where, text = str(error.get("where") or ""), str(error.get("message") or "")
        level = "loop" if where == "generation" and "loop detector" in text else "error"
        events.append((step, Notice(level, text)))
    events.append((0.0, SpinnerChanged("")))
    summary = TurnSummary.of(counts, duration, prompt_tokens=tokens[0], completion_tokens=tokens[1])
    events.append((0.0, summary))
    reason = "error" if turn.errors else "answered"
    error_text = str(turn.errors[-1].get("message")) if turn.errors else None
    events.append((0.0, TurnEnded(reason, error_text)))  # type: ignore[arg-type]
    return events


def _parsed(arguments: Any) -> dict[str, Any]:
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments or "{}")
    except (TypeError, json.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _tool_events(
    call_id: str, name: str, args: dict[str, Any], record: ToolRecord, output: str, pace: Pace
) -> list[TimedEvent]:
    title, status, seconds, diff = record.title, record.status, record.duration, record.diff
    badge, raw = record.badge, record.raw
    events: list[TimedEvent] = [(0.0, ToolStarted(call_id, name, args, title, badge, raw))]
    if status == ToolStatus.REJECTED:
        events.append(
            (pace.wait(pace.step_seconds), PermissionResolved(call_id, PermissionAnswer.REJECT))
        )
    else:
        events.append((0.0, SpinnerChanged(running_state(name))))
    shown = pace.wait(min(seconds, pace.longest_tool_seconds))
    events.append((shown, ToolFinished(call_id, name, title, status, seconds, output, diff)))
    return events
