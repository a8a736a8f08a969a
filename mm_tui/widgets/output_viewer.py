"""The full output of a tool call, full screen, with search (Ctrl+O on a row).

The model gets the output cut at `maxOutput`; the person can always read all of it here. The
header carries the whole command (a row's title is cut to one line). It opens at the end, where
a command's verdict usually is; a running command's viewer follows the new output.
"""

from __future__ import annotations

from rich.highlighter import Highlighter
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Input, Log, Static

from mm_tui.support.terminal_text import literal

VIEWER_KEYS = "/ search · n next · N previous · Home/End top/bottom · Esc close"
NO_MATCH = "no line holds {query!r}"
MATCH = "match {index} of {count} (line {line})"


class QueryHighlighter(Highlighter):
    """Marks every occurrence of the search text (case-insensitive) in a line."""

    def __init__(self) -> None:
        self.query = ""

    def highlight(self, text: Text) -> None:
        if not self.query:
            return
        plain, needle = text.plain.lower(), self.query.lower()
        start = plain.find(needle)
        while start >= 0:
            text.stylize("reverse bold", start, start + len(needle))
            start = plain.find(needle, start + len(needle))


class OutputViewer(Screen[None]):
    """One call's whole output; `append` adds live output while the command runs."""

    BINDINGS = [
        Binding("escape,q", "close", "Close", id="viewer.close"),
        Binding("slash,ctrl+f", "search", "Search", id="viewer.search"),
        Binding("n", "next_match(1)", "Next match", id="viewer.next"),
        Binding("N", "next_match(-1)", "Previous match", id="viewer.previous"),
        Binding("home", "top", "Top", show=False, id="viewer.top"),
        Binding("end", "bottom", "Bottom", show=False, id="viewer.bottom"),
    ]
    DEFAULT_CSS = """
    OutputViewer { layout: vertical; }
    OutputViewer #viewer-title { height: auto; max-height: 6; padding: 0 1; background: $panel; }
    OutputViewer #viewer-log { height: 1fr; background: $surface; }
    OutputViewer #viewer-search { height: 1; border: none; padding: 0 1; display: none; }
    OutputViewer #viewer-search.-open { display: block; }
    OutputViewer #viewer-status { height: 1; padding: 0 1; color: $text-muted; }
    """

    def __init__(
        self,
        title: str,
        text: str,
        *,
        note: str = "",
        live: bool = False,
        call_id: str = "",
        blink: bool = True,
    ) -> None:
        """`blink`: the search field's cursor blinks (off for snapshots)."""
        super().__init__()
        self.blink = blink
        self.call_id = call_id
        self.title_text = title
        self.text = text
        self.note = note
        self.live = live
        self.highlighter = QueryHighlighter()
        self.matches: list[int] = []
        self.match_index = -1
        self._newline_owed = False

    def compose(self) -> ComposeResult:
        header = Content(literal(self.title_text))
        if self.note:
            header += Content.styled(f"\n{self.note}", "dim")
        yield Static(header, id="viewer-title")
        log = Log(id="viewer-log", auto_scroll=False)
        log.highlight = True
        log.highlighter = self.highlighter
        yield log
        yield Input(
            placeholder="search (Enter: next match, Esc: close search)",
            id="viewer-search",
            compact=True,
        )
        yield Static(Content(VIEWER_KEYS), id="viewer-status")

    @property
    def log_view(self) -> Log:
        return self.query_one("#viewer-log", Log)

    def on_mount(self) -> None:
        self.query_one("#viewer-search", Input).cursor_blink = self.blink
        self.append(self.text, initial=True)
        self.log_view.focus()
        self.call_after_refresh(self.action_bottom)

    def append(self, text: str, *, initial: bool = False) -> None:
        """Add output at the end; the view follows when it was at the end."""
        if not initial:
            self.text += text
        cleaned = literal(text)
        if not cleaned:
            return
        if self._newline_owed:
            cleaned = "\n" + cleaned
        self._newline_owed = cleaned.endswith("\n")
        if self._newline_owed:
            cleaned = cleaned[:-1]
        log = self.log_view
        follow = log.is_vertical_scroll_end or initial
        if cleaned:
            log.write(cleaned, scroll_end=follow and not initial)

    # -- search ---------------------------------------------------------------------------

    def action_search(self) -> None:
        """Open the search field."""
        field = self.query_one("#viewer-search", Input)
        field.add_class("-open")
        field.focus()

    @on(Input.Submitted, "#viewer-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        query = event.value
        if query != self.highlighter.query:
            self.highlighter.query = query
            needle = query.lower()
            lines = self.log_view.lines
            self.matches = [i for i, line in enumerate(lines) if needle and needle in line.lower()]
            self.match_index = -1
            self.log_view.notify_style_update()  # redraw the lines with the new marks
            self.log_view.refresh()
        self.action_next_match(1)
        # As in less: once the search is made, n and N move between matches (in the field
        # they were letters typed after the query); / reopens the field to change it.
        self.log_view.focus()

    def action_next_match(self, step: int) -> None:
        """n / N: the next or previous line holding the search text, wrapping around."""
        status = self.query_one("#viewer-status", Static)
        if not self.highlighter.query:
            status.update(Content(VIEWER_KEYS))
            return
        if not self.matches:
            status.update(Content(NO_MATCH.format(query=self.highlighter.query)))
            return
        self.match_index = (self.match_index + step) % len(self.matches)
        line = self.matches[self.match_index]
        log = self.log_view
        log.scroll_to(y=max(0, line - log.scrollable_content_region.height // 2), animate=False)
        status.update(
            Content(
                MATCH.format(index=self.match_index + 1, count=len(self.matches), line=line + 1)
            )
        )

    # -- moving ---------------------------------------------------------------------------

    def action_top(self) -> None:
        """Home: the first line."""
        self.log_view.scroll_home(animate=False)

    def action_bottom(self) -> None:
        """End: the last line (where the viewer opens)."""
        self.log_view.scroll_end(animate=False)

    def action_close(self) -> None:
        """Esc: close the search field while it is open (focused, or showing the query after
        Enter), else go back to the window."""
        field = self.query_one("#viewer-search", Input)
        if field.has_focus or field.has_class("-open"):
            field.remove_class("-open")
            self.log_view.focus()
            return
        self.dismiss(None)


def viewer_for_row(
    call_id: str, title: str, row_output: str, kept: str | None, *, running: bool
) -> OutputViewer:
    """The viewer of a row: the kept whole output when there is one, else the row's own."""
    if running:
        note = "running: the live output (its last 200,000 characters)"
        return OutputViewer(title, row_output, note=note, live=True, call_id=call_id)
    if kept is not None and len(kept) > len(row_output):
        note = f"the whole output ({len(kept):,} characters); the model got {len(row_output):,}"
        return OutputViewer(title, kept, note=note, call_id=call_id)
    return OutputViewer(title, row_output, note="the whole output", call_id=call_id)
