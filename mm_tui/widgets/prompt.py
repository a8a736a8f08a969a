"""The prompt: Enter sends, Ctrl+J (or Shift+Enter) adds a line, Up and Down walk the history.

`@` at a word's start asks for the file picker; Ctrl+G edits the text in `$EDITOR`; a big
paste is remembered so the transcript can show it folded (`[pasted 200 lines]`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from textual import events
from textual.binding import Binding
from textual.message import Message

from mm_tui.widgets.prompt_history import PromptHistory
from mm_tui.widgets.textual_private import TextAreaHooks
from mm_tui.window.slash_commands import complete_command

#: After a key or focus the cursor blinks this many times (a second each), then stands shown
#: until the next one, as GTK's cursor-blink-timeout (10 s): an idle window draws no frame.
BLINKS_AFTER_INPUT = 10


class PromptInput(TextAreaHooks):
    """A multi-line TextArea that sends on Enter; history steps only at its first/last line."""

    DEFAULT_CSS = """
    PromptInput {
        height: auto;
        min-height: 3;
        max-height: 10;
        border: round $primary 50%;
        padding: 0 1;
    }
    PromptInput:focus {
        border: round $accent;
    }
    """

    BINDINGS = [
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="prompt.newline"),
        Binding("tab", "complete", "Complete", show=False, id="prompt.complete"),
        Binding("ctrl+g", "external_editor", "Editor", id="prompt.editor"),
        Binding("end", "end", "End", show=False, id="prompt.end"),
    ]

    class BottomRequested(Message):
        """End with the cursor at the line's end: the transcript goes back to the bottom."""

    class Submitted(Message):
        """The person pressed Enter on a non-empty prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(
        self,
        history: PromptHistory,
        *,
        root: Path | None = None,
        id: str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`root`: the project whose files `@` offers (None: `@` is just a character).
        `clock`: the window's clock, for when the person last typed here."""
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
        )
        self.prompt_history = history
        self.root = root
        #: Keys the prompt leaves to the app's bindings (a/s/r while a question is open).
        self.reserved_keys: frozenset[str] = frozenset()
        #: Big pastes of this session, for folding them in the transcript (newest last).
        self.pastes: list[str] = []
        #: Half-blinks since the last key or focus (`BLINKS_AFTER_INPUT` blinks in all).
        self.blinks = 0
        self.clock = clock
        #: When the person last typed here (a key, a paste): a question that appears
        #: soon after leaves the keys to the prompt.
        self.typed_at = float("-inf")

    def typing(self) -> None:
        """The person typed here now (a key or a paste, maybe handed on by the window)."""
        self.typed_at = self.clock()

    def typed_within(self, seconds: float) -> bool:
        """The person typed here in the last `seconds`."""
        return self.clock() - self.typed_at < seconds

    def blink_restarting(self) -> None:
        self.blinks = 0

    def blink_may_toggle(self) -> bool:
        if self.blinks >= 2 * BLINKS_AFTER_INPUT and self.cursor_visible_now:
            self.blink_timer.pause()  # the cursor stands, shown; a key or focus blinks it again
            return False
        self.blinks += 1
        return True

    async def key_pressed(self, event: events.Key) -> None:
        bound = self.app.active_bindings.get(event.key)
        if bound is None or bound.node is self:  # F2 and F1 leave the prompt: not typing
            self.typing()
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._submit()
            return
        if event.character == "@" and self.root is not None and self._at_word_start():
            await self.text_area_key(event)
            self._open_file_picker(self.root)
            return
        if event.key == "up" and self.cursor_location[0] == 0:
            entry = self.prompt_history.previous(self.text)
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._show(entry)
                return
        if event.key == "down" and self.cursor_location[0] == self.document.line_count - 1:
            entry = self.prompt_history.next()
            if entry is not None:
                event.stop()
                event.prevent_default()
                self._show(entry)
                return
        await self.text_area_key(event)

    def _open_file_picker(self, root: Path) -> None:
        """`@`: pick a file of the project; its path follows the `@` (Esc leaves the `@`)."""
        from mm_tui.widgets.file_picker import FilePicker

        def picked(path: str | None) -> None:
            if path:
                self.insert(f"{path} ")
            self.focus()

        self.app.push_screen(FilePicker(root, blink=self.cursor_blink), picked)

    def _at_word_start(self) -> bool:
        row, column = self.cursor_location
        line = self.document.get_line(row)
        return column == 0 or line[column - 1 : column].isspace()

    def text_pasted(self, event: events.Paste) -> None:
        """Remember a big paste; TextArea's own handler (dispatched after this) inserts it."""
        self.typing()
        remember_paste(self.pastes, event.text)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key in self.reserved_keys:
            return False
        return super().check_consume_key(key, character)

    def put_back(self, text: str) -> None:
        """Text taken back to edit (a queued message, an undone one) goes before what is
        already typed, on its own line, the cursor at its end."""
        typed = self.text
        self._show(f"{text}\n{typed}" if typed.strip() else text)
        if typed.strip():
            self.move_cursor((text.count("\n"), len(text.rsplit("\n", 1)[-1])))

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def _submit(self) -> None:
        text = self.text
        if not text.strip():
            return
        self.prompt_history.add(text)
        self.clear()
        self.post_message(self.Submitted(text))

    def action_newline(self) -> None:
        """Insert a line break (Enter is taken by sending)."""
        self.insert("\n")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return True  # Tab: `action_complete` completes, or moves the focus to the rows

    def action_end(self) -> None:
        """End: to the line's end; already there, the transcript returns to the bottom."""
        row, column = self.cursor_location
        if column >= len(self.document.get_line(row)):
            self.post_message(self.BottomRequested())
        self.action_cursor_line_end()

    def action_external_editor(self) -> None:
        """Ctrl+G: edit the prompt in `$VISUAL` / `$EDITOR`; the edited text comes back."""
        from mm_tui.widgets.external_editor import edit_in_editor

        edited, error = edit_in_editor(self.app, self.text)
        if error:
            self.notify(error, severity="error")
        elif edited is not None:
            self._show(edited)
        self.focus()

    def action_complete(self) -> None:
        """Tab: complete a slash command; with nothing to complete, go to the newest tool row
        (the call just made is the one a person looks at; Shift+Tab then walks older ones)."""
        completed = complete_command(self.text)
        if completed is not None:
            self._show(completed)
            return
        from mm_tui.widgets.tool_row import ToolRow

        rows = [row for row in self.screen.query(ToolRow) if row.focusable]
        if rows:
            self.screen.set_focus(rows[-1])
        else:
            self.screen.focus_next()


PASTE_FOLD_LINES = 20  # a paste of more lines is shown folded in the transcript
PASTES_KEPT = 20


def remember_paste(pastes: list[str], text: str) -> None:
    """Keep a big paste (bounded list) so `fold_pastes` can recognise it in a message."""
    if len(text.splitlines()) > PASTE_FOLD_LINES:
        # As the prompt holds it: terminals paste lines ended by CR (tmux, most of them).
        held = text.replace("\r\n", "\n").replace("\r", "\n")
        if held not in pastes:
            pastes.append(held)
        del pastes[:-PASTES_KEPT]


def fold_pastes(text: str, pastes: list[str]) -> str:
    """The message with each big paste it holds written `[pasted N lines]`."""
    for paste in pastes:
        if paste in text:
            text = text.replace(paste, f"[pasted {len(paste.splitlines())} lines]")
    return text
