"""A tool row (SPEC §7): `‣ bash <cmd>` with its status, duration and folded output.

Collapsed by default (failures open); Enter, Space or a click toggles. The body is built only
when first shown, so a transcript of hundreds of finished rows stays light.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.content import Content
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from mm_tui.agent.events import (
    PermissionAnswer,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
)
from mm_tui.widgets.literal_text import first_line, literal
from mm_tui.widgets.output_log import DiffLog, OutputLog, output_view
from mm_tui.widgets.permission import PermissionQuestion, answer_text
from mm_tui.widgets.status_line import spinner_glyph

BULLET = "‣"
ASKING_WORD = "waiting for your answer"
# Glyph and theme colour of each status; the word is the status's own value.
STATUS_LOOK: dict[ToolStatus, tuple[str, str]] = {
    ToolStatus.RUNNING: ("", "$accent"),
    ToolStatus.DONE: ("✓", "$success"),
    ToolStatus.FAILED: ("✗", "$error"),
    ToolStatus.TIMED_OUT: ("⏱", "$warning"),
    ToolStatus.REJECTED: ("⊘", "$warning"),
    ToolStatus.INTERRUPTED: ("■", "$text-muted"),
    ToolStatus.LOOP_DETECTED: ("↻", "$error"),
}
OPEN_WHEN_FINISHED = {ToolStatus.FAILED, ToolStatus.TIMED_OUT, ToolStatus.LOOP_DETECTED}
LIVE_OUTPUT_LIMIT = 200_000  # characters of live output kept for the row (the tail)


def format_duration(seconds: float) -> str:
    """`0.4s`, `12.0s`, `2m 05s`."""
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m {rest:02d}s"


def row_title(name: str, arguments: dict[str, Any], title: str) -> str:
    """The core's title, else `<tool> <first string argument>` (`lsp` adds action and symbol)."""
    if title:
        return title
    if name == "lsp":
        parts = [arguments.get(key, "") for key in ("action", "path", "symbol")]
        return " ".join(["lsp", *(str(part) for part in parts if part)])
    first = next((value for value in arguments.values() if isinstance(value, str)), "")
    return f"{name} {first}".rstrip()


class ToolRowHeader(Widget):
    """The row's one line; the title is cut with `…` so the status always shows."""

    def __init__(self, row: ToolRow) -> None:
        super().__init__()
        self.row = row

    def render(self) -> Content:
        status = self.row.status_content()
        room = max(8, self.size.width - status.cell_length - 3)
        title = Content(first_line(self.row.title)).truncate(room, ellipsis=True)
        bullet_style = STATUS_LOOK[self.row.status][1]
        return Content.assemble((BULLET, f"bold {bullet_style}"), " ", title, "  ", status)

    def on_click(self, event: events.Click) -> None:
        event.stop()
        self.row.action_toggle()


class ToolRow(VerticalGroup, can_focus=True):
    """One tool call, keyed by `call_id`, from ToolStarted to ToolFinished."""

    BINDINGS = [Binding("enter,space", "toggle", "Fold/unfold", id="row.toggle")]

    expanded: var[bool] = var(False, toggle_class="-expanded")

    def __init__(
        self, started: ToolStarted, *, preview_lines: int, clock: Callable[[], float]
    ) -> None:
        super().__init__(classes="tool-row")
        self.call_id = started.call_id
        self.tool_name = started.name
        self.title = row_title(started.name, started.arguments, started.title)
        self.preview_lines = preview_lines
        self.clock = clock
        self.started_at = clock()
        self.status = ToolStatus.RUNNING
        self.duration: float | None = None
        self.frame = 0
        self.output = ""
        self.diff: str | None = None
        self.answer = ""
        self.question: PermissionRequest | None = None
        self._body: VerticalGroup | None = None
        self._live_log: OutputLog | None = None

    def compose(self) -> ComposeResult:
        yield ToolRowHeader(self)

    # -- what the header says -------------------------------------------------------------

    def status_content(self) -> Content:
        """`⠋ running 1.2s`, `✓ done 0.4s · allowed once`, `? waiting for your answer`."""
        if self.question is not None:
            return Content.styled(f"? {ASKING_WORD} (a/s/r)", "bold $warning")
        glyph, style = STATUS_LOOK[self.status]
        if self.status == ToolStatus.RUNNING:
            glyph = spinner_glyph(self.frame)
            seconds = max(0.0, self.clock() - self.started_at)
        else:
            seconds = self.duration or 0.0
        status = Content.styled(f"{glyph} {self.status.value}", style)
        status += Content.styled(f" {format_duration(seconds)}", "dim")
        if self.answer and self.answer != self.status.value:  # not `rejected · rejected`
            status += Content.styled(f" · {self.answer}", "dim italic")
        return status

    def _redraw_header(self) -> None:
        if self.is_mounted:
            self.query_one(ToolRowHeader).refresh()

    # -- events from the core -------------------------------------------------------------

    def tick(self, frame: int) -> None:
        """Advance the spinner and the live duration."""
        self.frame = frame
        self._redraw_header()

    def ask(self, request: PermissionRequest) -> None:
        """Show the question (what will run, the diff) and open the row."""
        self.question = request
        self.diff = request.diff or self.diff
        self._redraw_header()
        self.expanded = True
        self._rebuild_body()

    def resolve(self, answer: PermissionAnswer, automatic: bool) -> None:
        """Show the answer on the row and fold the question away."""
        was_asking = self.question is not None
        self.question = None
        self.answer = answer_text(answer, automatic)
        self.started_at = self.clock()
        self._redraw_header()
        if was_asking:
            self.expanded = False
            self._rebuild_body()

    def add_output(self, text: str) -> None:
        """Live output of a running command."""
        self.output = (self.output + text)[-LIVE_OUTPUT_LIMIT:]
        if self._live_log is not None:
            self._live_log.append(text, follow=True)

    def finish(self, finished: ToolFinished) -> None:
        """The final status, duration and output (exactly what the model received)."""
        self.question = None
        self.status = finished.status
        self.duration = finished.duration
        self.output = finished.output
        self.diff = finished.diff or self.diff
        if finished.title:
            self.title = finished.title
        self._redraw_header()
        if finished.status in OPEN_WHEN_FINISHED:
            self.expanded = True
        self._rebuild_body()

    # -- the body -------------------------------------------------------------------------

    def action_toggle(self) -> None:
        """Fold or unfold the body (Enter, Space, click)."""
        self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        if expanded and self._body is None:
            self._rebuild_body()

    def _rebuild_body(self) -> None:
        """Build the body for the current state, if it is shown or was built before."""
        if not self.is_mounted or (self._body is None and not self.expanded):
            return
        if self._body is not None:
            self._body.remove()
        self._live_log = None
        self._body = VerticalGroup(*self._body_widgets(), classes="tool-body")
        self.mount(self._body)

    def _body_widgets(self) -> list[Widget]:
        if self.question is not None:
            return [PermissionQuestion(self.question, preview_lines=self.preview_lines)]
        widgets: list[Widget] = []
        if self.diff and self.status != ToolStatus.RUNNING:
            summary = literal(self.output).partition("\n")[0]
            if summary:
                widgets.append(Static(Content.styled(summary, "dim"), classes="diff-summary"))
            widgets.append(DiffLog(self.diff, height=self.preview_lines))
            return widgets
        if self.status == ToolStatus.RUNNING:
            self._live_log = OutputLog(height=self.preview_lines)
            self._live_log.append(self.output, follow=True)
            return [self._live_log]
        if not self.output:
            return [Static(Content.styled("(no output)", "dim italic"), classes="empty")]
        return [output_view(self.output, height=self.preview_lines)]

    def to_markdown(self) -> str:
        """The row for `/export`: its line, then its output (or diff) in a fence."""
        glyph = STATUS_LOOK[self.status][0] or "…"
        line = f"**{BULLET} {literal(self.title)}** — {glyph} {self.status.value}"
        if self.duration is not None:
            line += f" {format_duration(self.duration)}"
        if self.answer:
            line += f" · {self.answer}"
        body = self.diff if self.diff else self.output
        if not body:
            return line
        language = "diff" if self.diff else "text"
        fence = "````" if "```" in body else "```"
        return f"{line}\n\n{fence}{language}\n{literal(body).rstrip()}\n{fence}"
