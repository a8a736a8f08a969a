"""The `@` picker: type a few letters of a file's path, Enter inserts it into the prompt.

The project's file list (`.gitignore` honoured) is read in a thread when the picker opens, so
a large tree never freezes the window; matching is done as the person types.
"""

from __future__ import annotations

from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from mm_tui.support.file_index import FileIndex
from mm_tui.support.terminal_text import visible
from mm_tui.widgets.option_moves import highlighted_id, move_highlight
from mm_tui.widgets.picker_look import picker_look

PICKER_TITLE = "Attach a file: type to filter, Enter picks, Esc cancels"
READING = "reading the project's files…"
NO_MATCH = "no file matches"
MAX_SHOWN = 50


class FilePicker(ModalScreen[str | None]):
    """Returns the chosen path (relative to the project, `/`-separated) or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="files.cancel"),
        Binding("down", "move(1)", "Next", show=False, id="files.next"),
        Binding("up", "move(-1)", "Previous", show=False, id="files.previous"),
    ]
    DEFAULT_CSS = (
        picker_look("FilePicker")
        + """
    FilePicker #file-matches { height: auto; max-height: 20; }
    FilePicker #file-query { margin: 1 0; background: $boost; }
    FilePicker #file-note { color: $text-muted; }
    """
    )

    class IndexReady(Message):
        """The worker finished listing the project."""

        def __init__(self, index: FileIndex) -> None:
            super().__init__()
            self.index = index

    def __init__(
        self, root: Path, *, query: str = "", index: FileIndex | None = None, blink: bool = True
    ) -> None:
        """`blink`: the query's cursor blinks (off for snapshots, as the prompt's)."""
        super().__init__()
        self.blink = blink
        self.root = root
        self.index = index
        self.initial_query = query

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker"):
            yield Static(Content.styled(PICKER_TITLE, "bold"))
            yield Input(self.initial_query, placeholder="path…", id="file-query", compact=True)
            yield OptionList(id="file-matches", compact=True)
            yield Static(Content(READING), id="file-note")

    def on_mount(self) -> None:
        query = self.query_one(Input)
        query.cursor_blink = self.blink
        query.focus()
        if self.index is None:
            self._read_index()
        else:
            self._show_matches()

    @work(thread=True, exit_on_error=False)
    def _read_index(self) -> None:
        self.post_message(self.IndexReady(FileIndex(self.root)))

    @on(IndexReady)
    def _index_ready(self, message: IndexReady) -> None:
        self.index = message.index
        self._show_matches()

    @on(Input.Changed, "#file-query")
    def _query_changed(self) -> None:
        self._show_matches()

    def _show_matches(self) -> None:
        if self.index is None:
            return
        matches = self.index.search(self.query_one(Input).value.strip(), limit=MAX_SHOWN)
        option_list = self.query_one(OptionList)
        option_list.clear_options()
        option_list.add_options(Option(Content(visible(m.path)), id=m.path) for m in matches)
        if matches:
            option_list.highlighted = 0
        total = len(self.index.paths)
        note = f"{len(matches)} shown of {total} files" if matches else NO_MATCH
        if self.index.truncated:
            note += f" (the listing stops at {total} files)"
        self.query_one("#file-note", Static).update(Content(note))

    def action_move(self, step: int) -> None:
        """Up and Down move in the list while the query keeps the focus."""
        move_highlight(self.query_one(OptionList), step)

    @on(Input.Submitted, "#file-query")
    def _pick_highlighted(self) -> None:
        if (path := highlighted_id(self.query_one(OptionList))) is not None:
            self.dismiss(path)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Close without a file; the typed `@` stays in the prompt."""
        self.dismiss(None)
