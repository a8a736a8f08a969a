"""The prompt: Enter sends, Ctrl+J (or Shift+Enter) adds a line, Up and Down walk the history."""

from __future__ import annotations

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import TextArea

from mm_tui.widgets.prompt_history import PromptHistory
from mm_tui.window.slash_commands import complete_command


class PromptInput(TextArea):
    """A multi-line TextArea that sends on Enter; history steps only at its first/last line."""

    BINDINGS = [
        Binding("ctrl+j,shift+enter", "newline", "Newline", id="prompt.newline"),
        Binding("tab", "complete", "Complete", show=False, id="prompt.complete"),
    ]

    class Submitted(Message):
        """The person pressed Enter on a non-empty prompt."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, history: PromptHistory, *, id: str | None = None) -> None:
        super().__init__(
            id=id,
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            compact=True,
            highlight_cursor_line=False,
        )
        self.prompt_history = history
        #: Keys the prompt leaves to the app's bindings (a/s/r while a question is open).
        self.reserved_keys: frozenset[str] = frozenset()

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self._submit()
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
        await super()._on_key(event)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if key in self.reserved_keys:
            return False
        return super().check_consume_key(key, character)

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
        if action == "complete":
            return complete_command(self.text) is not None
        return True

    def action_complete(self) -> None:
        """Complete a slash command (Tab)."""
        completed = complete_command(self.text)
        if completed is not None:
            self._show(completed)
