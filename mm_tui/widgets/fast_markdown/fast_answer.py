"""mm-tui's own drawing of a streaming answer (docs/decisions/0003).

Textual's `MarkdownStream` appends, parses, lays out and draws the whole document again as it
grows; this draws closed blocks once and only the open block again (`AnswerStream`), on the
window's clock. `MM_TUI_MARKDOWN=stock` turns it off (`markdown_choice.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from markdown_it.token import Token
from textual.timer import Timer
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.fast_markdown.aligned_table import AlignedTable
from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from mm_tui.widgets.fast_markdown.compact_lists import CompactBulletList, CompactOrderedList
from mm_tui.widgets.fast_markdown.line_gate import LineGate
from mm_tui.widgets.fast_markdown.long_blocks import answer_parser, long_block
from mm_tui.widgets.grows_in_place import GrowsInPlace

#: The answer is re-parsed and redrawn at most this often while it streams (10 frames a
#: second): a token a frame would cost the model's machine a frame per token.
FLUSH_SECONDS = 0.1
#: Parsing may take at most this share of the time: a huge block (a list of thousands of
#: items) is re-parsed whole on each flush, so its flushes space out as it grows.
PARSE_SHARE = 3


class FastAnswerBlock(GrowsInPlace, AnswerBlock):
    """The model's answer: streamed into one self-drawing `AnswerStream`, then kept.

    While the answer streams, its text goes to an `AnswerStream` at most every
    `FLUSH_SECONDS` (the first piece at once): Textual's `MarkdownStream` would append, parse,
    lay out and draw the screen once per token. When the window ticks (`clocked`), the stream
    draws whole lines only (`LineGate`). An answer built whole (a replay, a revived
    block) is Textual's Markdown from the start; so is a streamed answer holding a block the
    stream draws only approximately (a table), once it is finished.
    """

    BLOCKS = {
        **Markdown.BLOCKS,
        "bullet_list_open": CompactBulletList,
        "ordered_list_open": CompactOrderedList,
        "table_open": AlignedTable,
    }

    def __init__(
        self,
        markdown: str = "",
        *,
        clocked: bool = False,
        tail_room: Callable[[], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`clocked`: the window's tick calls `tick()`, so pieces after the first wait for it
        and are drawn by whole lines (`LineGate` on `clock`) instead of a timer of their own.
        `tail_room`: how tall the streaming answer may stay before it scrolls inside itself
        (`AnswerStream.tail_room`; the transcript's followed view)."""
        super().__init__(
            markdown,
            clocked=clocked,
            tail_room=tail_room,
            clock=clock,
            parser_factory=answer_parser,
        )
        self._stream: AnswerStream | None = None
        self._timer: Timer | None = None
        self._flush_lock = asyncio.Lock()
        self._last_flush = 0.0
        self._interval = FLUSH_SECONDS

    @property
    def grows_in_place(self) -> bool:
        """Only while it holds the stream alone: Textual's blocks need its second layout."""
        return self._stream is not None and len(self.children) == 1

    @property
    def source(self) -> str:
        """The Markdown on screen (pieces not yet flushed are not)."""
        return self._stream.text if self._stream is not None else super().source

    def unhandled_token(self, token: Token) -> MarkdownBlock | None:
        """A long simple list, folded by the answer's parser, is one widget (long_blocks.py)."""
        return long_block(self, token)

    async def _pieces_arrived(self) -> None:
        """Drawn at the next flush (or the window's next tick)."""
        self._schedule()

    def _schedule(self) -> None:
        if self._timer is not None or (self.clocked and self._stream is not None):
            return
        wait = self._last_flush + self._interval - time.monotonic()
        self._timer = self.set_timer(max(wait, 0.001), self._flush)

    async def tick(self) -> bool:
        """The window's clock: what arrived goes to the stream, which draws it if whole lines
        are complete (`LineGate`); whether it drew."""
        if self._unshown and self._timer is None:
            await self._flush()
        if self._stream is None:
            return False
        drew = self._stream.draw()
        self._stream.grow()  # a view that stopped following takes the lines above
        return drew

    async def _flush(self) -> None:
        self._timer = None
        async with self._flush_lock:  # flushes never overlap
            text = "".join(self._unshown)
            self._unshown.clear()
            if not self.is_attached:
                return
            if text and self._finished and self._stream is None:
                await self.update(text)  # whole before it was ever drawn: Textual's Markdown
                return
            if text:
                started = time.monotonic()
                first = self._stream is None
                if self._stream is None:
                    gate = LineGate(self.clock) if self.clocked else None
                    self._stream = AnswerStream(self, answer_parser, gate=gate)
                    if self.tail_room is not None:
                        self._stream.tail_room = self.tail_room
                    await self.mount(self._stream)
                self._stream.extend(text)
                if first:  # the first words show at once
                    self._stream.draw(force=True)
                self._last_flush = time.monotonic()
                self._interval = max(FLUSH_SECONDS, PARSE_SHARE * (self._last_flush - started))
            if self._finished and self._stream is not None:
                await self._end_stream(self._stream)

    async def finish(self) -> None:
        """Draw what is pending: the answer is complete (if it is not mounted yet, its first
        flush, at mount, ends it)."""
        self._finished = True
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.is_mounted:
            await self._flush()

    def show_lines_above(self) -> int:
        """The streaming answer's lines above its widget come back, and the text it holds back
        is drawn (below them); how many lines were above."""
        if self._stream is None:
            return 0
        hidden = self._stream.show_lines_above()
        self._stream.draw(force=True)
        return hidden

    async def _end_stream(self, stream: AnswerStream) -> None:
        stream.draw(force=True)
        stream.grow(now=True)
        stream.show_lines_above()
        if not stream.exact and self.is_attached:
            self._stream = None
            with self.app.batch_update():  # the stream's lines give way to Textual's blocks
                await self.update(stream.text)
