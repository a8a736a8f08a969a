"""The model's blocks: its answer streamed as Markdown, and its reasoning folded.

Kept apart from the other blocks because Markdown (markdown-it, pygments) costs ~30 ms to
import: the transcript imports this module when the first answer arrives, not at start-up.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from markdown_it.token import Token
from textual.content import Content
from textual.timer import Timer
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from mm_tui.support.terminal_text import literal
from mm_tui.widgets.aligned_table import AlignedTable
from mm_tui.widgets.compact_lists import CompactBulletList, CompactOrderedList
from mm_tui.widgets.long_blocks import answer_parser, long_block

REASONING_TITLE = "Thinking"
#: The answer is re-parsed and redrawn at most this often while it streams (10 frames a
#: second): a token a frame would cost the model's machine a frame per token.
FLUSH_SECONDS = 0.1
#: Parsing may take at most this share of the time: a huge block (a list of thousands of
#: items) is re-parsed whole on each flush, so its flushes space out as it grows.
PARSE_SHARE = 3


class AnswerBlock(Markdown):
    """The model's answer, appended to its Markdown at most every `FLUSH_SECONDS`.

    Textual's `MarkdownStream` appends as fast as the loop allows, which at 50 tokens a second
    is one parse, layout and frame per token. Here the first piece shows at once and the next
    ones are gathered until the next flush.
    """

    BLOCKS = {
        **Markdown.BLOCKS,
        "bullet_list_open": CompactBulletList,
        "ordered_list_open": CompactOrderedList,
        "table_open": AlignedTable,
    }

    def __init__(self, markdown: str = "") -> None:
        super().__init__(markdown or None, classes="answer", parser_factory=answer_parser)
        self.parts: list[str] = [markdown] if markdown else []
        self._unshown: list[str] = []
        self._timer: Timer | None = None
        self._flush_lock = asyncio.Lock()
        self._last_flush = 0.0
        self._interval = FLUSH_SECONDS

    def unhandled_token(self, token: Token) -> MarkdownBlock | None:
        """A long simple list, folded by the answer's parser, is one widget (long_blocks.py)."""
        return long_block(self, token)

    async def add(self, text: str) -> None:
        """Append a piece of the answer; it is drawn at the next flush."""
        text = literal(text)
        if not text:
            return
        self.parts.append(text)
        self._unshown.append(text)
        if self.is_mounted:
            self._schedule()

    def on_mount(self) -> None:
        if self._unshown:  # arrived before the block was mounted
            self._schedule()

    def _schedule(self) -> None:
        if self._timer is not None:
            return
        wait = self._last_flush + self._interval - time.monotonic()
        self._timer = self.set_timer(max(wait, 0.001), self._flush)

    async def _flush(self) -> None:
        self._timer = None
        async with self._flush_lock:  # appends never overlap: each parses from the last
            text = "".join(self._unshown)
            self._unshown.clear()
            if not text or not self.is_attached:
                return
            started = time.monotonic()
            await self.append(text)
            self._last_flush = time.monotonic()
            self._interval = max(FLUSH_SECONDS, PARSE_SHARE * (self._last_flush - started))

    async def finish(self) -> None:
        """Draw what is pending: the answer is complete."""
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.is_mounted:
            await self._flush()

    def to_markdown(self) -> str:
        return "".join(self.parts).strip()

    def archived(self) -> AnswerRecord:
        return AnswerRecord("".join(self.parts))


class ReasoningBlock(Collapsible):
    """The model's reasoning, folded: shown on request, never sent back to the model."""

    def __init__(self, text: str = "") -> None:
        body = Static("", markup=False, classes="reasoning-text")
        super().__init__(body, title=REASONING_TITLE, collapsed=True, classes="reasoning")
        self.text = ""
        self._body = body
        if text:
            self.add(text)

    def add(self, text: str) -> None:
        """Append reasoning text."""
        self.text += literal(text)
        self._body.update(Content(self.text))

    def to_markdown(self) -> str:
        return ReasoningRecord(self.text).markdown()

    def archived(self) -> ReasoningRecord:
        return ReasoningRecord(self.text)


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """An answer out of the layout (`archive.Archived`): its text, already literal."""

    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        return self.text.strip()

    def revive(self) -> AnswerBlock:
        return AnswerBlock(self.text)


@dataclass(frozen=True, slots=True)
class ReasoningRecord:
    """Reasoning out of the layout (`archive.Archived`)."""

    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        quoted = "\n".join(f"> {line}" for line in self.text.strip().splitlines())
        return f"> *{REASONING_TITLE}*\n>\n{quoted}"

    def revive(self) -> ReasoningBlock:
        return ReasoningBlock(self.text)
