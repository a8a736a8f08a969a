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
#: The same stop when the repeated result was a success: not called "failing".
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

CYCLE_NOTE = (
    "[LOOP_DETECTED: You keep repeating the same sequence of actions with the same results. "
    "Please try a different approach or provide more information.]"
)
CYCLE_STOP = (
    "[error: the model repeated the same cycle of {size} calls ({tools}) {count} times with the "
    "same results — turn stopped by the loop detector; rephrase the request, or fix what the "
    "tools kept reporting]"
)
FAILING_NOTE = (
    "[LOOP_DETECTED: You have called {tool} {count} times in a row and every call failed. "
    "Please try a different approach or provide more information.]"
)
FAILING_STOP = (
    "[error: the model called {tool} {count} times in a row with different arguments and every "
    "call failed — turn stopped by the loop detector; rephrase the request, or fix what the "
    "tool kept reporting]"
)

WARN_AT = 3  # the same triple 3 times in a row: a note is appended
STOP_AT = 6  # 3 more: the turn stops
CYCLE_PERIODS = range(2, 5)  # A,B,A,B… up to cycles of four calls, same 3/6 rule in cycles
FAILING_WARN_AT, FAILING_STOP_AT = 6, 12  # one tool, new arguments each time, all failing
_HISTORY = 64


def loop_stop_message(tool: str, count: int, *, failed: bool) -> str:
    """SPEC §5's stop line; a repeated success is not called a failing result."""
    return (LOOP_STOP if failed else LOOP_STOP_SAME).format(tool=tool, count=count)


class LoopVerdict(Enum):
    NONE = "none"
    WARN = "warn"
    STOP = "stop"


def _failed(output: str) -> bool:
    return output.startswith("[error") or "[exit code:" in output


class LoopDetector:
    """Counts loops of tool calls (SPEC §5, and more): the same (tool, input,
    output) triple in a row (the seed's exact strings), a cycle of calls repeating with the
    same results (A,B,A,B…), and one tool called again and again with new arguments that all
    fail. Each gets a note first and a stop later. `/new` resets it."""

    def __init__(self) -> None:
        self._last: tuple[str, str, str] | None = None
        self._count = 0
        self._history: list[tuple[str, str, str, bool]] = []
        self._kind = "same"
        self._detail: dict[str, Any] = {}

    def record(
        self,
        tool: str,
        arguments: dict[str, Any] | str,
        output: str,
        failed: bool | None = None,
    ) -> LoopVerdict:
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        triple = (tool, arguments, output)
        self._count = self._count + 1 if triple == self._last else 1
        self._last = triple
        self._history = [*self._history, (*triple, _failed(output) if failed is None else failed)]
        self._history = self._history[-_HISTORY:]
        self._kind = "same"
        if self._count >= STOP_AT:
            return LoopVerdict.STOP
        if self._count >= WARN_AT:
            return LoopVerdict.WARN
        return self._cycle() or self._failing() or LoopVerdict.NONE

    def _cycle(self) -> LoopVerdict | None:
        history = [entry[:3] for entry in self._history]
        for period in CYCLE_PERIODS:
            cycle = history[-period:]
            if len(history) < WARN_AT * period or len(set(cycle)) < 2:
                continue
            repeated = 0
            while (repeated + 1) * period <= len(history) and history[
                len(history) - (repeated + 1) * period : len(history) - repeated * period
            ] == cycle:
                repeated += 1
            if repeated >= WARN_AT:
                self._kind = "cycle"
                tools = ", ".join(entry[0] for entry in cycle)
                self._detail = {"size": period, "tools": tools, "count": repeated}
                return LoopVerdict.STOP if repeated >= STOP_AT else LoopVerdict.WARN
        return None

    def _failing(self) -> LoopVerdict | None:
        tool = self._history[-1][0]
        run = 0
        for entry in reversed(self._history):
            if entry[0] != tool or not entry[3]:
                break
            run += 1
        inputs = {entry[1] for entry in self._history[-run:]} if run else set()
        if run < FAILING_WARN_AT or len(inputs) < 2:
            return None
        self._kind = "failing"
        self._detail = {"tool": tool, "count": run}
        return LoopVerdict.STOP if run >= FAILING_STOP_AT else LoopVerdict.WARN

    def note(self) -> str:
        """The note appended to the output of a call that got a WARN."""
        if self._kind == "cycle":
            return CYCLE_NOTE
        if self._kind == "failing":
            return FAILING_NOTE.format(**self._detail)
        return LOOP_NOTE

    def stop_message(self, tool: str) -> str:
        """The error that replaces the output of the call that got a STOP."""
        if self._kind == "cycle":
            return CYCLE_STOP.format(**self._detail)
        if self._kind == "failing":
            return FAILING_STOP.format(**self._detail)
        return loop_stop_message(tool, self._count, failed=self._history[-1][3])

    def notice(self, tool: str) -> str:
        """The transcript line for a WARN."""
        if self._kind == "cycle":
            return f"{self._detail['tools']}: the same cycle of calls and results {self._detail['count']} times"
        if self._kind == "failing":
            return f"{tool}: {self._detail['count']} failing calls in a row"
        return f"{tool}: the same call and result 3 times in a row"

    @property
    def count(self) -> int:
        return self._count

    def reset(self) -> None:
        self._last, self._count = None, 0
        self._history = []
        self._kind = "same"


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


TEXT_NOTE = "the answer keeps repeating the same text; it is stopped if it goes on"
TEXT_STOP = (
    "[error: the model's {what} ran away: it repeats the same text ({count} characters so "
    "far: {sample}) — generation stopped; rephrase the request, or try another model]"
)
TEXT_WINDOW = 1024  # the last 1 KB of the answer is one pattern repeated: a note
TEXT_PERIODS = range(8, 257)
TEXT_EVERY = 64  # characters between two looks (this runs per streamed fragment)


class TextRepetition:
    """A streamed answer repeating itself: the last 1 KB is one pattern of 8 to
    256 characters repeated. The first time, a note; when another 1 KB has repeated, a stop."""

    def __init__(self, what: str = "answer") -> None:
        self.what = what  # "answer" or "reasoning", as the stop line names it
        self._noted_at: int | None = None
        #: The length at which `feed` next looks; before it, `feed` says "" at once.
        self.next_look = TEXT_WINDOW

    def feed(self, text: str, length: int | None = None) -> str:
        """ "" while the answer looks sane, "note" once, then the stop error text. `text` may
        be only the answer's end (its last TEXT_WINDOW characters at least) when `length`
        gives the whole answer's."""
        length = len(text) if length is None else length
        if length < self.next_look:
            return ""
        self.next_look = length + TEXT_EVERY
        pattern = _repeated(text[-TEXT_WINDOW:])
        if pattern is None:
            return ""
        if self._noted_at is None:
            self._noted_at = length
            return "note"
        if length - self._noted_at >= TEXT_WINDOW:
            return TEXT_STOP.format(what=self.what, count=length, sample=json.dumps(pattern[:40]))
        return ""


def _repeated(tail: str) -> str | None:
    """The shortest pattern of TEXT_PERIODS that `tail` (TEXT_WINDOW characters) repeats
    whole, if any. A period p needs the character p before the last to be the last: those
    places are found with `rfind` (in C), latest first, and only they are compared, first on
    their last 16 characters (this runs every 64 characters of a streamed answer)."""
    size = len(tail)
    last, end = tail[-1], tail[-16:]
    lowest = size - 1 - TEXT_PERIODS[-1]
    at = tail.rfind(last, lowest, size - TEXT_PERIODS[0])
    while at >= 0:
        period = size - 1 - at
        if tail.startswith(end, at - 15) and tail[period:] == tail[:-period]:
            return tail[-period:]
        at = tail.rfind(last, lowest, at)
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
