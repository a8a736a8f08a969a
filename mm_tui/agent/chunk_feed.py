"""A model call's stream, a block of chunks at a time, into the assembler, the watch and the
events, at as little CPU per chunk as the model's machine can spare.

The stream's reading thread hands over the chunks one read of the socket completed (a few at
the window's pace). Each chunk is still assembled and watched on its own, as SPEC §3 and
the stream bounds say (the same piece counted per chunk, a stop at the chunk that makes it), but the
usual chunk (a piece of the answer, nothing else) takes a short road, and the deltas said in a
row are joined into one event per block: the window and `-p` show the joined text, and an
event per token cost more than the token's own work on the CPU the model needs.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Literal

from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WRITING,
    Notice,
    ReasoningDelta,
    TextDelta,
)
from mm_tui.agent.loop_detector import runaway_error
from mm_tui.agent.stream import StreamAssembler
from mm_tui.agent.stream_bounds import StreamVerdict, StreamWatch
from mm_tui.agent.turn_signals import TurnSignals

log = logging.getLogger(__name__)


class ChunkFeed:
    """Call it with each block's chunks, in the stream's reading thread; True stops the
    stream (a runaway: `runaway` and `runaway_where` say which).

    The events come in the order a chunk at a time would say them (`SpinnerChanged` before the
    delta it announces, a note after the text that brought it), with the text or reasoning
    deltas in a row joined into one; the interrupt flag is looked at before each chunk."""

    def __init__(self, assembler: StreamAssembler, signals: TurnSignals, started: float) -> None:
        self.assembler = assembler
        self.signals = signals
        self.watch = StreamWatch()  # the answer and the reasoning, bounded like a call
        self.started = started
        self.first_token: float | None = None
        self.runaway: str | None = None
        self.runaway_where: Literal["generation", "model"] = "generation"
        self._pieces: list[str] = []  # the deltas in a row not said yet
        self._kind: type[TextDelta] | type[ReasoningDelta] | None = None

    def __call__(self, chunks: list[dict[str, Any]]) -> bool:
        try:
            return self._feed(chunks)
        finally:
            self._say()

    def _feed(self, chunks: list[dict[str, Any]]) -> bool:
        feed_text, watch_text = self.assembler.feed_text, self.watch.feed_text
        cancelled = self.signals.cancel.is_set
        pieces = self._pieces
        for chunk in chunks:
            if cancelled():
                return True
            text = feed_text(chunk)
            if not text:
                if self._feed_other(chunk):
                    return True
                continue
            if self._kind is not TextDelta:
                self._start(TextDelta, WRITING)
            pieces.append(text)
            verdict = watch_text(text)
            if (verdict.note or verdict.stop) and self._judged(verdict):
                return True
        return False

    def _feed_other(self, chunk: dict[str, Any]) -> bool:
        """Any chunk but the usual one, through the assembler's general road."""
        delta = self.assembler.feed(chunk)
        if delta.reasoning:
            self._start(ReasoningDelta, THINKING)
            self._pieces.append(delta.reasoning)
        if delta.text:
            self._start(TextDelta, WRITING)
            self._pieces.append(delta.text)
        if self.first_token is None and delta.tool_call is not None:
            self._first_token()
        verdict = self.watch.feed(delta, self.assembler)
        if (verdict.note or verdict.stop) and self._judged(verdict):
            return True
        if delta.tool_call is not None:
            self._say()
            self.signals.set_spinner(COMPOSING_TOOL_CALL)
            self.runaway = runaway_error(delta.tool_call)
            return bool(self.runaway)
        return False

    def _start(self, kind: type[TextDelta] | type[ReasoningDelta], spinner: str) -> None:
        """A delta of `kind` follows: the other kind's said first, then the spinner's state."""
        if self._kind is kind:
            return
        self._say()
        if self.first_token is None:
            self._first_token()
        self.signals.set_spinner(spinner)
        self._kind = kind

    def _judged(self, verdict: StreamVerdict) -> bool:
        """The watch's note said (after the text that brought it); True for a stop."""
        if verdict.note:
            self._say()
            self.signals.sink(Notice("warning", verdict.note))
        if verdict.stop:
            self.runaway, self.runaway_where = verdict.stop, verdict.where
            return True
        return False

    def _say(self) -> None:
        """The deltas in a row, as one event."""
        if self._kind is not None:
            pieces = self._pieces
            self.signals.sink(self._kind(pieces[0] if len(pieces) == 1 else "".join(pieces)))
            pieces.clear()
            self._kind = None

    def _first_token(self) -> None:
        self.first_token = time.monotonic()
        log.debug("model call: first token after %.3fs", self.first_token - self.started)
