"""The compact headless display: one line per tool call (`‣ bash ls  ✓ 0.2s`), as in the window.

This is what `-p` prints when stdout is not a terminal (logs, pipes, scripts that grep) or with
`--output-format rows`: stable lines, no command output.
"""

from __future__ import annotations

from mm_tui.agent.events import (
    STATUS_GLYPHS,
    Event,
    Notice,
    TextDelta,
    ToolFinished,
    ToolStatus,
    TurnEnded,
    TurnSummary,
)
from mm_tui.faces.terminal import TerminalWriter
from mm_tui.support.terminal_text import one_line


def row_line(event: ToolFinished) -> str:
    """`‣ bash ls  ✓ 0.2s` — with the status word when it is not plain success."""
    word = "" if event.status is ToolStatus.DONE else f" {event.status.value}"
    return f"‣ {event.title}  {STATUS_GLYPHS[event.status]}{word} {event.duration:.1f}s"


class RowPrinter:
    """Prints events as they come; rejects permission questions (nobody is there to answer)."""

    def __init__(self, writer: TerminalWriter) -> None:
        self.writer = writer

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.writer.stream(event.text)
        elif isinstance(event, ToolFinished):
            self.writer.line(row_line(event))
        elif isinstance(event, Notice):
            self.writer.line(f"[{event.level}] {one_line(event.text)}", to_err=True)
        elif isinstance(event, TurnSummary):
            self.writer.line(event.line())

    def finish(self, ended: TurnEnded, status: int) -> None:
        """Nothing more to say: the notices and the summary told the end."""
