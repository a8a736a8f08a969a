"""The transcript: every block of the conversation, anchored to the bottom while followed.

It owns the order of blocks (reasoning, answer, tool rows, notices, summaries) and finds rows
by `call_id`; the app feeds it the core's events. Its cost per frame must not grow with the
session: which blocks are mounted, archived as records and brought back is the job of
`BlockWindow`; a finished conversation (`--continue`, `--resume`, a replay at speed 0) arrives as
records built from its events (`show_past`), never as a widget per block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual.widget import Widget

from mm_tui.agent.events import (
    NoticeLevel,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    TurnSummary,
)
from mm_tui.support import collector
from mm_tui.widgets.archive import Archivable, Archived
from mm_tui.widgets.block_window import (
    FOLLOW_MARGIN,
    FOLLOW_SLACK,
    LIVE_MOST,
    OPEN_MOUNTED,
    REVIVE_BATCH,
    BlockWindow,
)
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.widgets.grows_in_place import GrowsInPlace
from mm_tui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from mm_tui.widgets.answer_blocks import AnswerBlock, ReasoningBlock

#: Lines beyond the view's height the streaming answer keeps while it scrolls inside itself.
TAIL_MARGIN = 1
#: Refreshes the view waits for that layout before it moves anyway.
SHIFT_TRIES = 10

__all__ = [
    "FOLLOW_MARGIN",
    "FOLLOW_SLACK",
    "LIVE_MOST",
    "OPEN_MOUNTED",
    "REVIVE_BATCH",
    "Transcript",
]


@runtime_checkable
class _Exportable(Protocol):
    """A block that can say itself in Markdown (every block type of the transcript)."""

    def to_markdown(self) -> str: ...


class Transcript(GrowsInPlace, BlockWindow):
    """The scrolling conversation. Sticks to the bottom until the person scrolls up.

    A gain of lines below (its `virtual_size`) asks for no second layout (`GrowsInPlace`): the
    streaming answer grows it several times a second."""

    DEFAULT_CSS = """
    Transcript {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
        /* The bar's column is kept when there is no bar: when the transcript first outgrows the
           view, nothing is wrapped again (no layout of every block). */
        scrollbar-gutter: stable;
    }
    """

    def __init__(self, *, preview_lines: int, clock: Callable[[], float]) -> None:
        super().__init__(id="transcript")
        self.preview_lines = preview_lines
        self.clock = clock
        self.rows: dict[str, ToolRow] = {}
        self._answer: AnswerBlock | None = None
        self._reasoning: ReasoningBlock | None = None
        #: The window ticks and calls `tick()`: a streaming answer draws on its ticks.
        self.clocked = False
        #: When the model's text (answer or reasoning) last arrived, on `clock`.
        self.text_at = float("-inf")

    @property
    def grows_in_place(self) -> bool:
        """Only while an answer streams at the bottom: a block above that changes its height
        (a row folded) moves every line below it, and those are drawn again."""
        return self.streaming

    def on_unmount(self) -> None:
        """The window closes: the collector as `ScreenSurface.show_resumed` found it at the
        end of start-up (tests open many windows in one process)."""
        collector.release()

    # -- what the block window asks -----------------------------------------------------

    def _settled(self, block: Widget) -> bool:
        """A block that can leave the layout: finished, not streaming, not asking."""
        if block is self._answer or block is self._reasoning:
            return False
        if isinstance(block, ToolRow):
            return block.status != ToolStatus.RUNNING and block.question is None
        return isinstance(block, Archivable)

    def _left(self, block: Widget) -> None:
        if isinstance(block, ToolRow) and self.rows.get(block.call_id) is block:
            del self.rows[block.call_id]

    def _came_back(self, record: Archived, block: Widget) -> None:
        if record.call_id is not None and isinstance(block, ToolRow):
            self.rows.setdefault(record.call_id, block)

    async def show_past(self, events: Iterable[Any]) -> None:
        """A finished conversation, above whatever the transcript shows: built as records
        (no widget per block), its newest `OPEN_MOUNTED` blocks mounted."""
        from mm_tui.widgets.past_blocks import past_records  # imports the answer's Markdown

        records = past_records(events, preview_lines=self.preview_lines, clock=self.clock)
        await self.show_records(records)

    # -- the conversation ---------------------------------------------------------------

    async def add_user_message(self, text: str) -> None:
        """The person's message opens a turn; sending returns to the bottom."""
        await self.end_message()
        await self._add(UserMessage(text))
        self.scroll_by_key("bottom")

    async def add_text(self, text: str) -> None:
        """A piece of the answer; opens an answer block when none is open."""
        self.text_at = self.clock()
        if self._answer is None:
            from mm_tui.widgets.answer_blocks import answer_block  # start-up: see its docstring

            self._answer = answer_block(
                clocked=self.clocked, tail_room=self._tail_room, clock=self.clock
            )
            await self._add(self._answer)
        await self._answer.add(text)

    def _tail_room(self) -> int:
        """How tall the streaming answer may stay before it scrolls inside itself, so that its
        gains lay nothing out: while the view follows the bottom, the view's height
        and a margin (a view grown by less still shows lines of the answer alone); else 0."""
        if not self.following or self._below:
            return 0
        return self.scrollable_content_region.height + TAIL_MARGIN

    def release_anchor(self) -> None:
        """The person scrolls: an answer scrolling inside itself takes back its lines above,
        and once they are laid out the view moves down by as many, showing what it showed
        (moved by the person's scroll)."""
        super().release_anchor()
        if self._answer is not None and (hidden := self._answer.show_lines_above()):
            taller = self.virtual_size.height + hidden
            self.call_after_refresh(self._shift_view, hidden, taller, SHIFT_TRIES)

    def _shift_view(self, lines: int, taller: int, tries: int, *, laid_out: bool = False) -> None:
        """Once the lines above are laid out (the transcript `taller`) and the person's own
        scroll (Textual applies it after a refresh, queued after this) is done, move the view
        down by `lines`."""
        if tries and (self.virtual_size.height < taller or not laid_out):
            laid_out = self.virtual_size.height >= taller
            self.call_after_refresh(self._shift_view, lines, taller, tries - 1, laid_out=laid_out)
            return
        self.scroll_to(y=self.scroll_y + lines, animate=False, immediate=True)

    @property
    def streaming(self) -> bool:
        """An answer or reasoning block is open: more deltas of it are coming."""
        return self._answer is not None or self._reasoning is not None

    async def tick(self) -> bool:
        """The window's clock: the streaming answer draws what arrived since the last tick
        (if it completed lines); whether it drew."""
        return self._answer is not None and await self._answer.tick()

    async def add_reasoning(self, text: str) -> None:
        """A piece of reasoning; opens a folded reasoning block when none is open."""
        self.text_at = self.clock()
        if self._reasoning is None:
            from mm_tui.widgets.answer_blocks import ReasoningBlock

            self._reasoning = ReasoningBlock()
            await self._add(self._reasoning)
        self._reasoning.add(text)

    async def end_message(self) -> None:
        """The model's message is complete: the next text opens new blocks below."""
        if self._answer is not None:
            answer, self._answer = self._answer, None
            await answer.finish()
        self._reasoning = None

    async def start_tool(self, started: ToolStarted) -> ToolRow:
        """A row for a new call (or the existing one when the call id repeats)."""
        await self.end_message()
        row = self.rows.get(started.call_id)
        if row is None:
            row = ToolRow(started, preview_lines=self.preview_lines, clock=self.clock)
            self.rows[started.call_id] = row
            await self._add(row)
        return row

    async def row_for(self, call_id: str, name: str, title: str) -> ToolRow:
        """The row of `call_id`, made on the spot if the core skipped its ToolStarted."""
        row = self.rows.get(call_id)
        if row is None:
            row = await self.start_tool(ToolStarted(call_id, name, {}, title))
        return row

    async def ask(self, request: PermissionRequest) -> None:
        """Show a permission question on its row."""
        row = await self.row_for(request.call_id, request.name, request.title)
        await self.flush()  # the question is mounted in the row at once
        row.ask(request)
        self.scroll_to_widget(row, animate=False)

    async def finish_tool(self, finished: ToolFinished) -> None:
        """A call's final status, duration and output."""
        row = await self.row_for(finished.call_id, finished.name, finished.title)
        row.finish(finished)

    def running_rows(self) -> list[ToolRow]:
        """Rows whose spinner and duration move."""
        return [
            row
            for row in self.rows.values()
            if row.status == ToolStatus.RUNNING and row.question is None
        ]

    async def add_notice(self, level: NoticeLevel, text: str) -> None:
        """A server fault, a warning, a loop verdict, information."""
        await self._add(NoticeLine(level, text))

    async def add_summary(self, summary: TurnSummary) -> None:
        """The line after a turn."""
        await self.end_message()
        await self._add(SummaryLine(summary))

    async def clear(self) -> None:
        """Forget everything (`/new`)."""
        await self.end_message()
        self.rows.clear()
        await self.clear_blocks()

    def to_markdown(self) -> str:
        """The whole transcript as Markdown, for `/export`: records and widgets in order."""
        parts: list[str] = []
        for block in self.blocks_in_order():
            if not isinstance(block, Widget):
                parts.append(block.markdown())
            elif isinstance(block, _Exportable):
                parts.append(block.to_markdown())
        return "\n\n".join(part for part in parts if part) + "\n"
