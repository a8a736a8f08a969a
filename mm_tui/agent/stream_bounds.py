"""Bounds on a streamed answer and its reasoning, beside SPEC §5's runaway calls.

A model that degenerates, or a server that misbehaves, can stream forever: the same text over
and over, more text than any context holds, or chunks that carry nothing at all (the turn then
looks busy and never ends). Tool-call arguments are cut by `loop_detector.runaway_error`; this
watch cuts the answer and the reasoning the same way, and counts empty chunks. Each stop is
one line that ends the turn through the same path as a runaway call (the text said so far is
kept, half-written calls are dropped, the line goes to the session's `errors`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from mm_tui.agent.loop_detector import TEXT_NOTE, TEXT_WINDOW, TextRepetition
from mm_tui.agent.stream import AssembledCall, StreamAssembler, StreamDelta

#: The same non-empty piece of text this many times in a row is a runaway (a 1-token loop is
#: caught long before the 1 KB pattern watch of `TextRepetition` would see it).
SAME_CHUNK_LIMIT = 256
#: An answer or a reasoning this large is cut whatever it says. Far above any real answer: a
#: 5,000-line listing with its Markdown is ~350 KB, a whole source file rewritten ~100 KB. A
#: runaway is cut long before on repetition (above); this bounds one that never repeats.
#: (A tool call's arguments keep `loop_detector.RUNAWAY_MAX_BYTES`, 256 KB.)
ANSWER_MAX_BYTES = 4 * 1024 * 1024
#: Chunks in a row that bring nothing (no text, reasoning, call, finish or usage).
EMPTY_CHUNK_LIMIT = 4096
SIZE_STOP = (
    "[error: the model's {what} ran away: it passed 4 MB ({count} characters so far: "
    "{sample}) — generation stopped; rephrase the request, or try another model]"
)
SAME_CHUNK_STOP = (
    "[error: the model's {what} ran away: it sent the same piece of text {times} times in a "
    "row ({sample}) — generation stopped; rephrase the request, or try another model]"
)
EMPTY_STOP = (
    "[error: the server sent {count} empty chunks in a row and nothing else — generation "
    "stopped; the server may be stuck: try again, or restart it]"
)
#: Tool calls being composed in one message: at most MAX_CALLS opened (`maxToolCalls` of them
#: run), each in at most MAX_CALL_FRAGMENTS fragments (256 KB at a token of 4 characters a
#: fragment), all their arguments together at most ANSWER_MAX_BYTES; and EMPTY_CHUNK_LIMIT
#: fragments in a row that add nothing (no call, name or argument) end the turn too.
MAX_CALLS = 1024
MAX_CALL_FRAGMENTS = 65_536
CALLS_STOP = (
    "[error: the model's tool calls ran away: {why} — generation stopped; rephrase the "
    "request, or try another model]"
)
CALL_STILL_STOP = (
    "[error: the server sent {count} tool-call chunks in a row that add nothing to the call — "
    "generation stopped; the server may be stuck: try again, or restart it]"
)
REASONING_NOTE = "the reasoning keeps repeating the same text; it is stopped if it goes on"
SAMPLE_CHARS = 40
TAIL = 2 * TEXT_WINDOW  # what a part keeps of its text: the repetition watch looks at 1 KB


@dataclass(frozen=True)
class StreamVerdict:
    """What one chunk means: nothing, a note to say once, or a stop (`where` for `errors`)."""

    note: str = ""
    stop: str = ""
    where: Literal["generation", "model"] = "generation"


_FINE = StreamVerdict()


def sample(text: str) -> str:
    """A short, one-line, quoted sample for an error line (never the huge value itself)."""
    return json.dumps(text[-SAMPLE_CHARS:])


class _Part:
    """The watch on one part of the stream: the answer's text, or the reasoning."""

    def __init__(self, what: str, note: str) -> None:
        self.what = what
        self.note = note
        self.size = 0
        self.length = 0  # characters so far
        self._tail = ""  # with `_new`, the last TAIL characters at least (not the whole text)
        self._new: list[str] = []  # the pieces since `_tail` was last built
        self.last = ""
        self.same = 0
        self.repetition = TextRepetition(what)

    @property
    def tail(self) -> str:
        """The text's end: its last TAIL characters at least. Built when read (every 64
        characters once the text passes 1 KB), not per piece: a piece is a token."""
        if self._new:
            tail = self._tail + "".join(self._new)
            self._new = []
            self._tail = tail[-TAIL:] if len(tail) > 2 * TAIL else tail
        return self._tail

    def feed(self, piece: str) -> StreamVerdict:
        count = len(piece)
        self.size += count if piece.isascii() else len(piece.encode("utf-8", "replace"))
        self.length += count
        self._new.append(piece)
        if self.size > ANSWER_MAX_BYTES:
            stop = SIZE_STOP.format(what=self.what, count=self.length, sample=sample(self.tail))
            return StreamVerdict(stop=stop)
        self.same = self.same + 1 if piece == self.last else 1
        self.last = piece
        if self.same >= SAME_CHUNK_LIMIT:
            stop = SAME_CHUNK_STOP.format(what=self.what, times=self.same, sample=sample(piece))
            return StreamVerdict(stop=stop)
        if self.length < self.repetition.next_look:
            return _FINE
        repeating = self.repetition.feed(self.tail, self.length)
        if repeating == "note":
            return StreamVerdict(note=self.note)
        return StreamVerdict(stop=repeating) if repeating else _FINE


class StreamWatch:
    """Feed it each chunk's delta, after the assembler; it says when to note or to stop."""

    def __init__(self) -> None:
        self.answer = _Part("answer", TEXT_NOTE)
        self.reasoning = _Part("reasoning", REASONING_NOTE)
        self.empty = 0

    def feed(self, delta: StreamDelta, assembler: StreamAssembler) -> StreamVerdict:
        verdict = _FINE
        if delta.reasoning:
            verdict = self.reasoning.feed(delta.reasoning)
        if delta.text and not verdict.stop:
            answer = self.answer.feed(delta.text)
            verdict = answer if answer.stop or answer.note else verdict
        if delta.tool_call is not None and not verdict.stop:
            verdict = _calls_verdict(delta.tool_call, assembler) or verdict
        if delta.text or delta.reasoning or delta.call_progress:
            self.empty = 0
        elif delta.tool_call is not None or (
            assembler.finish_reason is None and assembler.usage is None
        ):
            self.empty += 1
            if self.empty >= EMPTY_CHUNK_LIMIT:
                line = CALL_STILL_STOP if delta.tool_call is not None else EMPTY_STOP
                return StreamVerdict(stop=line.format(count=self.empty), where="model")
        return verdict

    def feed_text(self, text: str) -> StreamVerdict:
        """`feed` for a chunk that brought only `text` (non-empty), without its delta."""
        self.empty = 0
        return self.answer.feed(text)


def _calls_verdict(call: AssembledCall, assembler: StreamAssembler) -> StreamVerdict | None:
    """A stop when the tool calls being composed pass a bound (above), else None."""
    why = ""
    if len(assembler.calls) > MAX_CALLS:
        why = f"the message opened more than {MAX_CALLS} of them"
    elif call.fragments > MAX_CALL_FRAGMENTS:
        why = (
            f"the arguments of one came in more than {MAX_CALL_FRAGMENTS} pieces "
            f"({call.length} characters so far: {sample(call.tail)})"
        )
    elif assembler.calls_bytes > ANSWER_MAX_BYTES:
        why = f"their arguments together passed {ANSWER_MAX_BYTES // (1024 * 1024)} MB"
    return StreamVerdict(stop=CALLS_STOP.format(why=why)) if why else None
