"""The transcript: every block of the conversation, anchored to the bottom while followed.

It owns the order of blocks (reasoning, answer, tool rows, notices, summaries) and finds rows
by `call_id`; the app feeds it the core's events.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual.containers import VerticalScroll
from textual.widget import Widget

from mm_tui.agent.events import (
    NoticeLevel,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    TurnSummary,
)
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.widgets.tool_row import ToolRow

if TYPE_CHECKING:
    from mm_tui.widgets.answer_blocks import AnswerBlock, ReasoningBlock


@runtime_checkable
class _Exportable(Protocol):
    """A block that can say itself in Markdown (every block type of the transcript)."""

    def to_markdown(self) -> str: ...


class Transcript(VerticalScroll):
    """The scrolling conversation. Sticks to the bottom until the person scrolls up."""

    def __init__(self, *, preview_lines: int, clock: Callable[[], float]) -> None:
        super().__init__(id="transcript")
        self.preview_lines = preview_lines
        self.clock = clock
        self.rows: dict[str, ToolRow] = {}
        self._answer: AnswerBlock | None = None
        self._reasoning: ReasoningBlock | None = None

    def on_mount(self) -> None:
        self.anchor()

    async def _add(self, block: Widget) -> None:
        await self.mount(block)

    async def add_user_message(self, text: str) -> None:
        """The person's message opens a turn."""
        await self.end_message()
        await self._add(UserMessage(text))

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
        await self.remove_children()
        self.anchor()

    def to_markdown(self) -> str:
        """The whole transcript as Markdown, for `/export`."""
        parts = [child.to_markdown() for child in self.children if isinstance(child, _Exportable)]
        return "\n\n".join(part for part in parts if part) + "\n"
