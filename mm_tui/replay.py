"""`--replay FILE` and `--demo`: a saved session turned back into the core's events, timed.

The window plays them exactly as it shows a live turn, with no model: user messages become
TurnStarted, answers stream as TextDelta pieces, reasoning as ReasoningDelta, tool calls become
ToolStarted/ToolFinished (status, duration and diff from `tool_meta`), `errors` become notices,
and every turn ends with its TurnSummary.

The events are made lazily, as they are played: a 10,000-message session opens in
the time it takes to read it, and its 6-character text deltas are cut only when their turn
comes. At speed 0 ("everything at once") the window takes the session whole instead
(`Replay.at_once`) and builds its blocks straight from `conversation_events`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WAITING_FOR_MODEL,
    WRITING,
    AssistantMessageDone,
    Event,
    Notice,
    PermissionAnswer,
    PermissionResolved,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolKind,
    ToolRunning,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    running_state,
)
from mm_tui.agent.messages import Message
from mm_tui.agent.session import SessionError, read_session_document
from mm_tui.agent.session_log import SUFFIX as SESSION_LOG_SUFFIX
from mm_tui.agent.tool_record import ToolRecord

TimedEvent = tuple[float, Event]  # (seconds to wait before it, the event)
END_OF_REPLAY = "end of the replay — Ctrl+Q quits"
#: What a replay tells its port about the session: the top line's model and server.
_META_KEYS = ("model", "base_url", "cwd")


class ReplayError(Exception):
    """A session file that cannot be replayed, said in one line."""


@dataclass(frozen=True)
class Pace:
    """How fast a replay goes; `speed=0` plays everything at once (tests)."""

    chunk_chars: int = 6  # 0: each message's text in one piece
    chunk_seconds: float = 0.015
    step_seconds: float = 0.35
    longest_tool_seconds: float = 1.2
    speed: float = 1.0

    def wait(self, seconds: float) -> float:
        return seconds * self.speed


def demo_path() -> Path:
    """The demo session bundled with the package."""
    return Path(__file__).parent / "demo" / "demo.json"


@dataclass(frozen=True)
class Replay:
    """A session to play: iterating it makes its timed events one by one, as they are played."""

    document: dict[str, Any]
    pace: Pace

    @property
    def at_once(self) -> bool:
        """Speed 0: nothing to time, the whole conversation is shown at once."""
        return self.pace.speed == 0

    def __iter__(self) -> Iterator[TimedEvent]:
        return session_events(self.document, self.pace)


def load_replay(path: Path, pace: Pace | None = None) -> tuple[Replay, dict[str, str]]:
    """The session file's replay (its events made as played), and its model and server for
    the top line."""
    if Path(path).suffix == SESSION_LOG_SUFFIX:  # an append-only log: its whole history
        try:
            document = read_session_document(Path(path))
        except SessionError as error:
            raise ReplayError(str(error)) from None
        meta = {key: str(document.get(key) or "") for key in _META_KEYS}
        return Replay(document, pace or Pace()), meta
    try:
        session = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ReplayError(f"cannot read {path}: {error}") from None
    except json.JSONDecodeError as error:
        raise ReplayError(f"{path} is not JSON: {error}") from None
    if not isinstance(session, dict) or not isinstance(session.get("messages"), list):
        raise ReplayError(f"{path} is not a session file (no messages list)")
    meta = {key: str(session.get(key) or "") for key in _META_KEYS}
    return Replay(session, pace or Pace()), meta


@dataclass
class _Turn:
    """The messages of one user turn, and what the replay needs to end it."""

    messages: list[Message] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ended_abnormally(self) -> bool:
        """A turn that ends on anything but an assistant answer was cut by an error."""
        last = self.messages[-1] if self.messages else {}
        return not (last.get("role") == "assistant" and not last.get("tool_calls"))


def _split_turns(messages: list[Message]) -> list[_Turn]:
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


def session_events(session: dict[str, Any], pace: Pace) -> Iterator[TimedEvent]:
    """Every event of the session, in order, each with the pause before it; made lazily."""
    yield from _turns_events(session, pace)
    yield pace.wait(pace.step_seconds), Notice("info", END_OF_REPLAY)


def _turns_events(session: dict[str, Any], pace: Pace) -> Iterator[TimedEvent]:
    turns = _split_turns(session["messages"])
    _place_errors(turns, session.get("errors") or [])
    usage = session.get("usage") or {}
    sizes = [sum(len(str(m.get("content") or "")) for m in turn.messages) for turn in turns]
    total = sum(sizes) or 1
    for turn, size in zip(turns, sizes, strict=True):
        share = size / total
        tokens = (
            round(int(usage.get("prompt_tokens", 0)) * share),
            round(int(usage.get("completion_tokens", 0)) * share),
        )
        yield from _turn_events(turn, session.get("tool_meta") or {}, tokens, pace)


#: Whole messages, no pauses: the conversation as a front shows it at once.
AT_ONCE = Pace(chunk_chars=0, speed=0)


def conversation_events(session: dict[str, Any]) -> Iterator[Event]:
    """The session's events without their timing, each message's text in one piece and no
    spinner and no end of replay: what a front shows of a finished conversation (--continue,
    a replay at speed 0)."""
    for _, event in _turns_events(session, AT_ONCE):
        if not isinstance(event, SpinnerChanged):
            yield event


def _chunks(text: str, size: int) -> Iterator[str]:
    if size <= 0:
        if text:
            yield text
        return
    for start in range(0, len(text), size):
        yield text[start : start + size]


def _turn_events(
    turn: _Turn, tool_meta: dict[str, Any], tokens: tuple[int, int], pace: Pace
) -> Iterator[TimedEvent]:
    step, chunk = pace.wait(pace.step_seconds), pace.wait(pace.chunk_seconds)
    counts: Counter[ToolKind] = Counter()
    duration = 0.0
    names: dict[str, str] = {}
    arguments: dict[str, dict[str, Any]] = {}
    for message in turn.messages:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            yield step, TurnStarted(content)
            yield 0.0, SpinnerChanged(WAITING_FOR_MODEL)
        elif role == "assistant":
            reasoning = str(message.get("reasoning_content") or message.get("reasoning") or "")
            yield step, SpinnerChanged(THINKING if reasoning else WRITING)
            for piece in _chunks(reasoning, pace.chunk_chars):
                yield chunk, ReasoningDelta(piece)
            if content:
                yield 0.0, SpinnerChanged(WRITING)
                for piece in _chunks(content, pace.chunk_chars):
                    yield chunk, TextDelta(piece)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                names[call.get("id", "")] = str(function.get("name") or "tool")
                arguments[call.get("id", "")] = _parsed(function.get("arguments"))
            if message.get("tool_calls"):
                yield step, SpinnerChanged(COMPOSING_TOOL_CALL)
            yield 0.0, AssistantMessageDone(content, reasoning)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            name = names.get(call_id, "tool")
            record = ToolRecord.from_json(tool_meta.get(call_id))
            duration += record.duration
            kind = record.counted_kind(name)
            if kind is not None:
                counts[kind] += 1
            yield from _tool_events(
                call_id, name, arguments.get(call_id, {}), record, content, pace
            )
            yield 0.0, SpinnerChanged(WAITING_FOR_MODEL)
    for error in turn.errors:
        where, text = str(error.get("where") or ""), str(error.get("message") or "")
        level = "loop" if where == "generation" and "loop detector" in text else "error"
        yield step, Notice(level, text)
    yield 0.0, SpinnerChanged("")
    summary = TurnSummary.of(counts, duration, prompt_tokens=tokens[0], completion_tokens=tokens[1])
    yield 0.0, summary
    reason = "error" if turn.errors else "answered"
    error_text = str(turn.errors[-1].get("message")) if turn.errors else None
    yield 0.0, TurnEnded(reason, error_text)  # type: ignore[arg-type]


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
) -> Iterator[TimedEvent]:
    title, status, seconds, diff = record.title, record.status, record.duration, record.diff
    yield 0.0, ToolStarted(call_id, name, args, title, record.badge, record.raw)
    if status == ToolStatus.REJECTED:
        yield pace.wait(pace.step_seconds), PermissionResolved(call_id, PermissionAnswer.REJECT)
    else:
        yield 0.0, ToolRunning(call_id, name)
        yield 0.0, SpinnerChanged(running_state(name))
    shown = pace.wait(min(seconds, pace.longest_tool_seconds))
    yield shown, ToolFinished(call_id, name, title, status, seconds, output, diff)
