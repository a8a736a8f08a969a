"""The status line: the spinner and the core's state text (SPEC §3), and the queued messages."""

from __future__ import annotations

from collections.abc import Iterable

from textual.content import Content
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from mm_tui.support.terminal_text import one_line
from mm_tui.widgets.line_strips import line_strip

SPINNER_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
IDLE_TEXT = "Ready"
#: Between the first frame and the core being built: a message typed now waits for it.
STARTING_TEXT = "Starting…"
NEW_BELOW = "↓ {count} new — End returns to the bottom"


def format_elapsed(seconds: float) -> str:
    """The turn's time on the status line, in whole seconds (`0s`, `12s`, `2m 05s`): its text
    changes once a second, and each change is a frame, which costs the model's machine CPU."""
    if seconds < 60:
        return f"{max(0, int(seconds))}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m {rest:02d}s"


def spinner_glyph(frame: int) -> str:
    """The spinner's glyph for a frame number (shared by the status line and running rows)."""
    return SPINNER_FRAMES[frame % len(SPINNER_FRAMES)]


class StatusLine(Widget):
    """One line: `⠋ Waiting for the model` while a turn runs, `Ready` between turns."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
    }
    """

    state: reactive[str] = reactive("")
    frame: reactive[int] = reactive(0)
    queued: reactive[int] = reactive(0)
    #: The queued messages are kept after Esc, not sent.
    held: reactive[bool] = reactive(False)
    elapsed: reactive[str] = reactive("")
    #: Blocks that arrived below while the person reads further up.
    new_below: reactive[int] = reactive(0)
    #: The core is still being built: "Ready" would promise an answer it cannot start yet.
    starting: reactive[bool] = reactive(False)

    def render(self) -> Content:
        if self.state:
            head = Content.assemble(
                (spinner_glyph(self.frame), "bold $accent"), " ", (self.state, "bold")
            )
            if self.elapsed:
                head += Content.styled(f"  {self.elapsed}", "dim")
        else:
            head = Content.styled(STARTING_TEXT if self.starting else IDLE_TEXT, "dim")
        if self.queued:
            plural = "" if self.queued == 1 else "s"
            waiting = "kept" if self.held else "queued"
            head += Content.styled(f"  · {self.queued} message{plural} {waiting}", "$warning")
        if self.new_below:
            head += Content.styled(f"  {NEW_BELOW.format(count=self.new_below)}", "bold $accent")
        return head

    def render_line(self, y: int) -> Strip:
        """The line `render()` says, drawn by `line_strip` as Textual draws it: its clock and
        spinner draw it again and again while the model streams, and Textual's generic path
        cost ~0.2 ms each time. A selection on it is drawn by Textual."""
        if y or self.text_selection is not None:
            return super().render_line(y)
        return line_strip(self, self.render(), self.size.width, self.visual_style)


class QueuedMessages(Static):
    """Messages typed while a turn runs, waiting their turn (first line of each); after Esc,
    kept and not sent until the person says."""

    DEFAULT_CSS = """
    QueuedMessages {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    """

    _shown = ""

    def on_mount(self) -> None:
        self.display = False

    def show(self, queue: Iterable[str], *, held: bool = False) -> None:
        mark = "⏸ kept" if held else "⏳ queued"
        lines = [f"{mark}: {one_line((text.splitlines() or [''])[0])}" for text in queue]
        shown = "\n".join(lines)
        if shown == self._shown:
            return  # a message sent at once was never queued: no layout for nothing
        self._shown = shown
        self.display = bool(lines)
        self.update(Content(shown))
