"""A finished conversation's blocks as records, built straight from its events.

`--continue`, `--resume` and a replay at speed 0 show a conversation that is over: nothing in
it streams, runs or asks. Building a widget per block only to archive it again cost 30 s of CPU
at 5,000 rows; here the same events (`mm_tui.replay.conversation_events`) are folded into the
records the transcript keeps for blocks out of the layout (`archive.Archived`), exactly as the
transcript would have shown them, and only the newest few are ever made widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from mm_tui.agent.events import (
    AssistantMessageDone,
    Notice,
    PermissionResolved,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    TurnEnded,
    TurnStarted,
    TurnSummary,
)
from mm_tui.support.terminal_text import literal
from mm_tui.widgets.answer_blocks import AnswerRecord, ReasoningRecord
from mm_tui.widgets.archive import Archived
from mm_tui.widgets.blocks import NoticeRecord, SummaryRecord, UserRecord
from mm_tui.widgets.permission import answer_text
from mm_tui.widgets.tool_row import OPEN_WHEN_FINISHED, RowRecord, row_title


class _Builder:
    """The transcript's rules for where blocks go, applied to records."""

    def __init__(self, preview_lines: int, clock: Callable[[], float]) -> None:
        self.preview_lines = preview_lines
        self.clock = clock
        self.records: list[Archived] = []
        self.rows: dict[str, RowRecord] = {}
        self._answer: list[str] | None = None  # the open answer's pieces, at `_answer_at`
        self._answer_at = 0
        self._reasoning: list[str] | None = None
        self._reasoning_at = 0

    def end_message(self) -> None:
        """As `Transcript.end_message`: the next text opens new blocks below."""
        if self._answer is not None:
            self.records[self._answer_at] = AnswerRecord("".join(self._answer))
            self._answer = None
        if self._reasoning is not None:
            self.records[self._reasoning_at] = ReasoningRecord("".join(self._reasoning))
            self._reasoning = None

    def text(self, text: str) -> None:
        text = literal(text)  # as `AnswerBlock.add`
        if self._answer is None:
            self._answer, self._answer_at = [], len(self.records)
            self.records.append(AnswerRecord(""))
        self._answer.append(text)

    def reasoning(self, text: str) -> None:
        if self._reasoning is None:
            self._reasoning, self._reasoning_at = [], len(self.records)
            self.records.append(ReasoningRecord(""))
        self._reasoning.append(literal(text))

    def row(self, call_id: str, name: str, title: str, started: ToolStarted | None) -> RowRecord:
        row = self.rows.get(call_id)
        if row is None:
            self.end_message()
            arguments = started.arguments if started is not None else {}
            badge, raw = (started.badge, started.raw) if started is not None else ("", "")
            row = RowRecord(call_id, name, row_title(name, arguments, title), badge, raw,
                            self.preview_lines, self.clock)  # fmt: skip
            self.rows[call_id] = row
            self.records.append(row)
        return row

    def add(self, event: Any) -> None:
        match event:
            case TurnStarted(text=text):
                self.end_message()
                self.records.append(UserRecord(text))
            case TextDelta(text=text):
                self.text(text)
            case ReasoningDelta(text=text):
                self.reasoning(text)
            case AssistantMessageDone() | TurnEnded():
                self.end_message()
            case ToolStarted():
                self.end_message()
                self.row(event.call_id, event.name, event.title, event)
            case PermissionResolved(call_id=call_id, answer=answer, automatic=automatic):
                if (row := self.rows.get(call_id)) is not None:
                    row.answer = answer_text(answer, automatic)
            case ToolFinished():
                row = self.row(event.call_id, event.name, event.title, None)
                row.status, row.duration, row.output = event.status, event.duration, event.output
                row.diff = event.diff or row.diff
                row.title = event.title or row.title
                row.expanded = event.status in OPEN_WHEN_FINISHED
            case Notice(level=level, text=text):
                self.records.append(NoticeRecord(level, text))
            case TurnSummary():
                self.end_message()
                self.records.append(SummaryRecord(event))
            case _:
                pass  # spinner, usage: nothing the transcript shows as a block


def past_records(
    events: Iterable[Any], *, preview_lines: int, clock: Callable[[], float]
) -> list[Archived]:
    """The records of every block `events` make, in order; no widget is built."""
    builder = _Builder(preview_lines, clock)
    for event in events:
        builder.add(event)
    builder.end_message()
    return builder.records
