"""Loops and runaways (SPEC §5): the same call over and over, and tool-call arguments that
never end."""

from __future__ import annotations

import json
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mm_tui.agent.stream import AssembledCall

LOOP_NOTE = (
    "[LOOP_DETECTED: You have attempted the same action multiple times with the same result. "
    "Please try a different approach or provide more information.]"
)
LOOP_STOP = (
    "[error: the model repeated the same {tool} call {count} times in a row with the same "
    "failing result — turn stopped by the loop detector; rephrase the request, or fix what the "
    "tool kept reporting]"
)
#: The same stop when the repeated result was a success (issue 14): not called "failing".
LOOP_STOP_SAME = LOOP_STOP.replace("same failing result", "same result").replace(
    "fix what the tool kept reporting", "say what is still missing"
)
RUNAWAY = (
    "[error: the model's tool call ran away: its arguments repeat the same pattern "
    "({count} characters so far: {sample}) — generation stopped; rephrase the request, or try "
    "another model]"
)
RUNAWAY_SIZE = (
    "[error: the model's tool call ran away: its arguments passed 256 KB "
    "({count} characters so far: {sample}) — generation stopped; rephrase the request, or try "
    "another model]"
)

WARN_AT = 3  # the same triple 3 times in a row: a note is appended
STOP_AT = 6  # 3 more: the turn stops


def loop_stop_message(tool: str, count: int, *, failed: bool) -> str:
    """SPEC §5's stop line; a repeated success is not called a failing result."""
    return (LOOP_STOP if failed else LOOP_STOP_SAME).format(tool=tool, count=count)


class LoopVerdict(Enum):
    NONE = "none"
    WARN = "warn"
    STOP = "stop"


class LoopDetector:
    """Counts identical (tool, input, output) triples in a row. `/new` resets it."""

    def __init__(self) -> None:
        self._last: tuple[str, str, str] | None = None
        self._count = 0

    def record(self, tool: str, arguments: dict[str, Any] | str, output: str) -> LoopVerdict:
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        triple = (tool, arguments, output)
        self._count = self._count + 1 if triple == self._last else 1
        self._last = triple
        if self._count >= STOP_AT:
            return LoopVerdict.STOP
        if self._count >= WARN_AT:
            return LoopVerdict.WARN
        return LoopVerdict.NONE

    @property
    def count(self) -> int:
        return self._count

    def reset(self) -> None:
        self._last, self._count = None, 0


RUNAWAY_WINDOW = 256
RUNAWAY_MAX_BYTES = 256 * 1024
PATTERN_MIN, PATTERN_MAX = 4, 64


def repeated_pattern(text: str) -> str | None:
    """The pattern (4 to 64 characters) that the last 256 characters of `text` repeat, if any."""
    if len(text) < RUNAWAY_WINDOW:
        return None
    tail = text[-RUNAWAY_WINDOW:]
    last = tail[-1]
    for period in range(PATTERN_MIN, PATTERN_MAX + 1):
        # a cheap look at one character first: most periods fail it (this runs per fragment)
        if tail[-1 - period] == last and tail[period:] == tail[:-period]:
            return tail[-period:]
    return None


def runaway_error(call: AssembledCall) -> str | None:
    """The runaway error for a call whose arguments are streaming, or None while they look
    sane. Call it after each fragment (SPEC §5)."""
    if call.size_bytes > RUNAWAY_MAX_BYTES:
        return RUNAWAY_SIZE.format(count=call.length, sample=json.dumps(call.tail[-40:]))
    if call.last_fragment and call.length >= RUNAWAY_WINDOW:
        pattern = repeated_pattern(call.tail)
        if pattern is not None:
            return RUNAWAY.format(count=call.length, sample=json.dumps(pattern))
    return None
