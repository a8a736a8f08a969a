"""The transcript: every block of the conversation, anchored to the bottom while followed.

It owns the order of blocks (reasoning, answer, tool rows, notices, summaries) and finds rows
by `call_id`; the app feeds it the core's events.

Its cost per frame must not grow with the session (issue 16). Textual lays out every mounted
child on each change, so:
- new blocks are mounted in batches, once per pass of the event loop (a replay or a long
  `--continue` delivers thousands at once);
- while the person follows the bottom, only the newest `LIVE_MOST` blocks stay mounted; older
  finished ones are archived as plain data (`archive.Archived`), like Toad's pruning;
- scrolling back to the top brings `REVIVE_BATCH` archived blocks back above, the view kept
  where it was;
- a finished conversation (`--continue`, `--resume`, a replay at speed 0) arrives as records
  built from its events (`show_past`): only its newest `OPEN_MOUNTED` blocks become widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from mm_tui.agent.events import (
    NoticeLevel,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    TurnSummary,
)
from mm_tui.widgets.archive import Archivable, Archived
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from mm_tui.widgets.answer_blocks import AnswerBlock, ReasoningBlock


@runtime_checkable
class _Exportable(Protocol):
    """A block that can say itself in Markdown (every block type of the transcript)."""

    def to_markdown(self) -> str: ...


#: Mounted blocks beyond this are archived (oldest first) while the bottom is followed ...
LIVE_MOST = 160
#: ... down to this many, so archiving happens once in a while, not at every block.
LIVE_LEAST = 80
#: Blocks brought back at a time when the person scrolls to the top.
REVIVE_BATCH = 60
#: Blocks of a resumed conversation mounted at once: more than a tall screen shows.
OPEN_MOUNTED = 40


class Transcript(VerticalScroll):
    """The scrolling conversation. Sticks to the bottom until the person scrolls up."""

    def __init__(self, *, preview_lines: int, clock: Callable[[], float]) -> None:
        super().__init__(id="transcript")
        self.preview_lines = preview_lines
        self.clock = clock
        self.rows: dict[str, ToolRow] = {}
        self._answer: AnswerBlock | None = None
        self._reasoning: ReasoningBlock | None = None
        self._archive: list[Archived] = []
        self._pending: list[Widget] = []
        self._reviving = False
        self._scrolled_away = False
        self.new_below = 0  # blocks added below the view since the person scrolled up

    class NewBelow(Message):
        """How many blocks wait below the view (0: the person sees the bottom)."""

        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    def on_mount(self) -> None:
        self.anchor()
        self.watch(self, "scroll_y", self._scrolled, init=False)

    def _set_new_below(self, count: int) -> None:
        if count != self.new_below:
            self.new_below = count
            self.post_message(self.NewBelow(count))

    @property
    def following(self) -> bool:
        """Whether the view follows the bottom (new output is seen as it comes)."""
        return not self._scrolled_away

    def _scrolled(self) -> None:
        if self.scroll_y >= self.max_scroll_y:
            self._set_new_below(0)

    def scroll_by_key(self, where: str) -> None:
        """PageUp/PageDown, Ctrl+Home, End from the prompt; End re-anchors to the bottom."""
        if where == "bottom":
            self._scrolled_away = False
            self.anchor()
            self._set_new_below(0)
            return
        self.release_anchor()  # new output no longer drags the view (issue 14)
        if where == "page_up":
            self.scroll_page_up(animate=False)
        elif where == "page_down":
            self.scroll_page_down(animate=False)
        elif where == "top":
            self.scroll_home(animate=False)

    # -- mounting in batches, archiving, reviving ---------------------------------------------

    async def _add(self, block: Widget) -> None:
        """Queue a block; every block queued in this pass of the loop is mounted at once."""
        self._pending.append(block)
        if self._scrolled_away:  # the person reads further up: say what came below
            self._set_new_below(self.new_below + 1)
        if len(self._pending) == 1:
            self.call_later(self.flush)

    async def flush(self) -> None:
        """Mount the queued blocks now (archiving what the layout need not hold)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self._following():
            # Blocks that would be archived right after mounting are archived unmounted.
            keep = len(pending) - LIVE_LEAST
            if keep > 0:
                gone = self._settled_prefix(pending[:keep])
                self._archive_blocks(pending[:gone])
                pending = pending[gone:]
        await self.mount_all(pending)
        await self._prune()

    def _following(self) -> bool:
        """The person follows the bottom: they have not scrolled away from it since.

        Not `is_vertical_scroll_end`: between a batch of blocks and the next layout the end
        moves away from the view while the anchor still follows it."""
        return not self._scrolled_away

    def release_anchor(self) -> None:
        super().release_anchor()  # the person scrolled (Textual calls this for them)
        self._scrolled_away = True

    def _settled(self, block: Widget) -> bool:
        """A block that can leave the layout: finished, not asking, not focused."""
        if block is self._answer or block is self._reasoning or block.has_focus_within:
            return False
        if isinstance(block, ToolRow):
            return block.status != ToolStatus.RUNNING and block.question is None
        return isinstance(block, Archivable)

    def _settled_prefix(self, blocks: list[Widget]) -> int:
        count = 0
        for block in blocks:
            if not self._settled(block):
                break
            count += 1
        return count

    def _archive_blocks(self, blocks: list[Widget]) -> None:
        for block in blocks:
            assert isinstance(block, Archivable)  # `_settled` let only these through
            self._archive.append(block.archived())
            if isinstance(block, ToolRow) and self.rows.get(block.call_id) is block:
                del self.rows[block.call_id]

    async def _prune(self) -> None:
        """While the bottom is followed, keep at most `LIVE_MOST` blocks mounted."""
        children = list(self.children)
        if len(children) <= LIVE_MOST or not self._following():
            return
        old = children[: self._settled_prefix(children[: len(children) - LIVE_LEAST])]
        if old:
            self._archive_blocks(old)
            await self.remove_children(old)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._scrolled_away and new_value >= self.max_scroll_y:
            self._scrolled_away = False  # back at the bottom: the anchor holds again
        at_top = new_value <= 0 < old_value  # and the person took it there (not a prune)
        if at_top and self._scrolled_away and self._archive and not self._reviving:
            self._reviving = True
            self.call_later(self._revive)

    async def _revive(self) -> None:
        """Bring the newest archived blocks back above the first one, the view kept still."""
        try:
            records = self._archive[-REVIVE_BATCH:]
            del self._archive[-REVIVE_BATCH:]
            first = self.children[0] if self.children else None
            await self.mount_all(self._revived(records), before=first)
            if first is not None:
                self.call_after_refresh(self._keep_view, first)
        finally:
            self._reviving = False

    def _revived(self, records: list[Archived]) -> list[Widget]:
        """Widgets for `records`; their rows are found by call id again."""
        blocks = [record.revive() for record in records]
        for record, block in zip(records, blocks, strict=True):
            if record.call_id is not None and isinstance(block, ToolRow):
                self.rows.setdefault(record.call_id, block)
        return blocks

    async def show_past(self, events: Iterable[Any]) -> None:
        """A finished conversation, above whatever the transcript shows: built as records
        (no widget per block), its newest `OPEN_MOUNTED` blocks mounted (issue 16)."""
        from mm_tui.widgets.past_blocks import past_records  # imports the answer's Markdown

        records = past_records(events, preview_lines=self.preview_lines, clock=self.clock)
        if self._archive:  # blocks already left the layout: the past goes before them
            self._archive[:0] = records
            return
        split = max(0, len(records) - OPEN_MOUNTED)
        self._archive[:0] = records[:split]
        first = self.children[0] if self.children else None
        await self.mount_all(self._revived(records[split:]), before=first)
        if self._following():
            self.scroll_end(animate=False, immediate=True)

    def _keep_view(self, first: Widget) -> None:
        self.scroll_to(y=self.scroll_y + first.virtual_region.y, animate=False, immediate=True)

    # -- the conversation ---------------------------------------------------------------

    async def add_user_message(self, text: str) -> None:
        """The person's message opens a turn; sending returns to the bottom."""
        await self.end_message()
        await self._add(UserMessage(text))
        self.scroll_by_key("bottom")

    async def add_text(self, text: str) -> None:
        """A piece of the answer; opens an answer block when none is open."""
        if self._answer is None:
            from mm_tui.widgets.answer_blocks import AnswerBlock  # start-up: see its docstring

            self._answer = AnswerBlock()
            await self._add(self._answer)
        await self._answer.add(text)

    async def add_reasoning(self, text: str) -> None:
        """A piece of reasoning; opens a folded reasoning block when none is open."""
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
        self._archive.clear()
        self._pending.clear()
        await self.remove_children()
        self._scrolled_away = False
        self.anchor()
        self._set_new_below(0)

    def to_markdown(self) -> str:
        """The whole transcript as Markdown, for `/export`: archived blocks first."""
        live = [*self.children, *self._pending]
        parts = [record.markdown() for record in self._archive]
        parts += [child.to_markdown() for child in live if isinstance(child, _Exportable)]
        return "\n\n".join(part for part in parts if part) + "\n"
