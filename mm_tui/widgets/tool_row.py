"""A tool row (SPEC §7): `‣ bash <cmd>` with its status, duration and folded output.

Collapsed by default (failures open); Enter, Space or a click toggles. The body is built only
when first shown, so a transcript of hundreds of finished rows stays light.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual import events
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.content import Content
from textual.message import Message
from textual.reactive import var
from textual.widget import Widget
from textual.widgets import Static

from mm_tui.agent.events import (
    PERSON_CALL_PREFIX,
    STATUS_GLYPHS,
    PermissionAnswer,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
)
from mm_tui.support.terminal_text import first_line, literal
from mm_tui.widgets.output_log import DiffLog, OutputLog, output_view
from mm_tui.widgets.permission import PermissionQuestion, answer_text
from mm_tui.widgets.status_line import spinner_glyph

BULLET = "‣"
ASKING_WORD = "waiting for your answer"
# Theme colour of each status (its glyph is the core's, its word the status's own value).
STATUS_COLOURS: dict[ToolStatus, str] = {
    ToolStatus.RUNNING: "$accent",
    ToolStatus.DONE: "$success",
    ToolStatus.FAILED: "$error",
    ToolStatus.TIMED_OUT: "$warning",
    ToolStatus.REJECTED: "$warning",
    ToolStatus.INTERRUPTED: "$text-muted",
    ToolStatus.LOOP_DETECTED: "$error",
}
#: Seconds a command runs before its row opens on the tail of its output.
LIVE_TAIL_AFTER = 1.0
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


class ToolRow(Widget, can_focus=True):
    """One tool call, keyed by `call_id`, from ToolStarted to ToolFinished.

    Folded, a row is a single widget drawing its own line: Textual lays out every widget of
    the transcript on each change, so 500 finished rows must stay 500 widgets. Unfolded, the
    body widgets are mounted below that line (and removed again when it folds).
    """

    DEFAULT_CSS = """
    ToolRow {
        padding: 0 1;
        height: 1;
        min-height: 1;
        layout: vertical;
    }
    /* Focus plainly seen in every theme: $boost (4% white) left it at 234 on 233. */
    ToolRow:focus { background: $accent 25%; }
    ToolRow:hover { background: $boost; }
    ToolRow.-expanded { height: auto; }
    ToolRow > .tool-body {
        height: auto;
        margin-left: 2;
    }
    ToolRow > .tool-body.-first {
        margin: 1 0 0 2;  /* the whole margin: `margin-top` alone would reset the left */
    }
    """
    BINDINGS = [
        Binding("enter,space", "fold", "Fold/unfold", id="row.toggle"),
        Binding("v", "toggle_raw", "What the model wrote", id="row.raw"),
        Binding("ctrl+o", "open_output", "Full output", id="row.full_output"),
    ]

    class OutputRequested(Message):
        """Ctrl+O: the app opens the full output viewer for this row."""

        def __init__(self, row: ToolRow) -> None:
            super().__init__()
            self.row = row

    expanded: var[bool] = var(False, toggle_class="-expanded")
    #: Show the raw text a repaired call was read from (its badge says how), instead of the output.
    show_raw: var[bool] = var(False)

    def __init__(
        self, started: ToolStarted, *, preview_lines: int, clock: Callable[[], float]
    ) -> None:
        super().__init__(classes="tool-row")
        self.call_id = started.call_id
        self.tool_name = started.name
        self.title = row_title(started.name, started.arguments, started.title)
        self.tooltip = literal(self.title)  # the whole command; the line may cut it
        self.badge = started.badge  # which rung of the repair ladder produced the call
        self.raw = started.raw
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
        self._live_log: OutputLog | None = None
        self._body_change: Awaitable[None] | None = None  # the watcher's, for `action_fold`
        #: A `!cmd` of the person's: its output stays open when it is done.
        self.keep_open = started.call_id.startswith(PERSON_CALL_PREFIX)
        self._opened_for_tail = False  # opened to show a running command's tail
        self._chosen_by_person = False  # folded or unfolded by the person: left as they chose

    def render(self) -> Content:
        """The row's line; the title is cut with `…` so the status always shows."""
        status = self.status_content()
        badge = Content.styled(f"  ⚕ {self.badge}", "italic $text-secondary") if self.badge else ""
        # The bullet, its space and the two spaces before the status take 4 cells (counting
        # 3 let the duration wrap into the body).
        used = 4 + status.cell_length + (badge.cell_length if badge else 0)
        room = max(8, self.content_region.width - used)
        title = Content(first_line(self.title)).truncate(room, ellipsis=True)
        bullet_style = STATUS_COLOURS[self.status]
        return Content.assemble((BULLET, f"bold {bullet_style}"), " ", title, "  ", status, badge)

    def on_mount(self) -> None:
        self.set_class(self.expanded, "-expanded")
        if self.expanded:  # unfolded before it was mounted (a failure, a replayed row)
            self._rebuild_body(mounting=True)

    async def on_click(self, event: events.Click) -> None:
        if event.widget is self:  # the row's line, not a click inside its body
            event.stop()
            await self.action_fold()

    # -- what the header says -------------------------------------------------------------

    def status_content(self) -> Content:
        """`⠋ running 1.2s`, `✓ done 0.4s · allowed once`, `? waiting for your answer`."""
        if self.question is not None:
            return Content.styled(f"? {ASKING_WORD} (a/s/r)", "bold $warning")
        glyph, style = STATUS_GLYPHS[self.status], STATUS_COLOURS[self.status]
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
        self.refresh()

    # -- events from the core -------------------------------------------------------------

    def tick(self, frame: int) -> None:
        """Advance the spinner and the live duration."""
        self.frame = frame
        self._redraw_header()
        self._open_for_tail()

    def _open_for_tail(self) -> None:
        """A command still running after LIVE_TAIL_AFTER seconds, with output, shows its
        tail; a quick one never opens (no body mounted and removed per call)."""
        if (
            self.status == ToolStatus.RUNNING
            and self.output
            and not self.expanded
            and self.question is None
            and not self._chosen_by_person
            and self.clock() - self.started_at >= LIVE_TAIL_AFTER
        ):
            self._opened_for_tail = True
            self._show(expanded=True)

    def ask(self, request: PermissionRequest) -> None:
        """Show the question (what will run, the diff) and open the row."""
        self.question = request
        self.diff = request.diff or self.diff
        self._redraw_header()
        self._show(expanded=True)

    def resolve(self, answer: PermissionAnswer, automatic: bool) -> None:
        """Show the answer on the row and fold the question away."""
        was_asking = self.question is not None
        self.question = None
        self.answer = answer_text(answer, automatic)
        self.started_at = self.clock()
        self._redraw_header()
        if was_asking:
            self._show(expanded=False)

    def add_output(self, text: str) -> None:
        """Live output of a running command."""
        self.output = (self.output + text)[-LIVE_OUTPUT_LIMIT:]
        if self._live_log is not None:
            self._live_log.append(text, follow=True)
        else:
            self._open_for_tail()

    def finish(self, finished: ToolFinished) -> None:
        """The final status, duration and output (exactly what the model received)."""
        self.question = None
        self.status = finished.status
        self.duration = finished.duration
        self.output = finished.output
        self.diff = finished.diff or self.diff
        if finished.title:
            self.title = finished.title
            self.tooltip = literal(self.title)
        self._redraw_header()
        opened_by_us = self._opened_for_tail and not self._chosen_by_person
        self._show(
            expanded=(self.expanded and not opened_by_us)
            or finished.status in OPEN_WHEN_FINISHED
            or self.keep_open
        )

    # -- the body -------------------------------------------------------------------------

    async def action_fold(self) -> None:
        """Fold or unfold the body (Enter, Space, click).

        The new height and the body's widgets (mounted or removed) make one layout and one
        frame: left to themselves they made three (the height, the body, its content), each a
        layout of every mounted block."""
        self._chosen_by_person = True
        with self.app.batch_update():
            self.expanded = not self.expanded  # the watcher starts the body's change
            change, self._body_change = self._body_change, None
            if change is not None:
                await change
            if isinstance(self.parent, Widget):  # the blocks below moved: draw them again,
                self.parent.refresh()  # even while the transcript grows in place (streaming)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While its question has the keys, Space and v are letters typed (the window hands
        them to the prompt) and Enter does nothing: they never fold the question away."""
        if action in ("fold", "toggle_raw") and self.question is not None:
            return self.screen.focused is self
        return True

    def action_open_output(self) -> None:
        """Ctrl+O: the whole output, full screen, with search."""
        self.post_message(self.OutputRequested(self))

    def action_toggle_raw(self) -> None:
        """Show what the model wrote when its call had to be repaired (key v)."""
        if not self.raw:
            self.notify("this call came as a proper tool call: there is no raw text to show")
            return
        self.show_raw = not self.show_raw
        self._show(expanded=True)

    def watch_expanded(self, expanded: bool) -> None:
        self._body_change = self._rebuild_body()

    def _show(self, *, expanded: bool) -> None:
        """Fold or unfold, rebuilding the body for the new state either way."""
        if self.expanded != expanded:
            self.expanded = expanded  # the watcher rebuilds
        else:
            self._rebuild_body()

    def _rebuild_body(self, *, mounting: bool = False) -> Awaitable[None] | None:
        """Mount the body for the current state when unfolded; fold = no body widgets.
        Returns what to await for the change to be done (None: nothing changed)."""
        if not (self.is_mounted or mounting) or (not self.expanded and not self.children):
            return None
        self._live_log = None
        removed = self.remove_children()
        if not self.expanded:
            return removed
        widgets = self._body_widgets()
        for widget in widgets:
            widget.add_class("tool-body")
        widgets[0].add_class("-first")
        # Optionally awaited (a fold awaits it, a rebuild on an event does not): an unawaited
        # coroutine here would be dropped with a warning.
        return AwaitComplete(removed, self.mount_all(widgets))

    def _body_widgets(self) -> list[Widget]:
        if self.question is not None:
            question = self.question
            return [
                PermissionQuestion(question, preview_lines=self.preview_lines, clock=self.clock)
            ]
        widgets: list[Widget] = []
        if self.show_raw and self.raw:
            label = f"what the model wrote ({self.badge}) — v shows the output again"
            widgets.append(Static(Content.styled(label, "dim"), classes="raw-label"))
            widgets.append(output_view(self.raw, height=self.preview_lines))
            return widgets
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

    def archived(self) -> RowRecord:
        """The row as data, to leave the layout (a finished row only) and come back the same."""
        return RowRecord(
            self.call_id, self.tool_name, self.title, self.badge, self.raw, self.preview_lines,
            self.clock, self.status, self.duration, self.output, self.diff, self.answer,
            self.expanded, self.show_raw,
        )  # fmt: skip

    def to_markdown(self) -> str:
        """The row for `/export`: its line, then its output (or diff) in a fence."""
        return self.archived().markdown()


@dataclass(slots=True)
class RowRecord:
    """A finished row without its widget (`archive.Archived`): what it shows, by reference."""

    call_id: str
    name: str
    title: str
    badge: str
    raw: str
    preview_lines: int
    clock: Callable[[], float]
    status: ToolStatus = ToolStatus.RUNNING
    duration: float | None = None
    output: str = ""
    diff: str | None = None
    answer: str = ""
    expanded: bool = False
    show_raw: bool = False

    def markdown(self) -> str:
        """The row for `/export`: its line, then its output (or diff) in a fence."""
        glyph = STATUS_GLYPHS[self.status]
        line = f"**{BULLET} {literal(self.title)}** — {glyph} {self.status.value}"
        if self.duration is not None:
            line += f" {format_duration(self.duration)}"
        if self.answer:
            line += f" · {self.answer}"
        if self.badge:
            line += f" · {self.badge}"
        body = self.diff if self.diff else self.output
        if not body:
            return line
        language = "diff" if self.diff else "text"
        fence = "````" if "```" in body else "```"
        return f"{line}\n\n{fence}{language}\n{literal(body).rstrip()}\n{fence}"

    def revive(self) -> ToolRow:
        started = ToolStarted(self.call_id, self.name, {}, self.title, self.badge, self.raw)
        row = ToolRow(started, preview_lines=self.preview_lines, clock=self.clock)
        row.status, row.duration, row.output = self.status, self.duration, self.output
        row.diff, row.answer = self.diff, self.answer
        row.set_reactive(ToolRow.show_raw, self.show_raw)
        row.set_reactive(ToolRow.expanded, self.expanded)
        row.set_class(self.expanded, "-expanded")
        return row
