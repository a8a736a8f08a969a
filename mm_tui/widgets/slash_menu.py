"""The menu under the prompt: the slash commands matching what the prompt holds."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from mm_tui.window.slash_commands import matching_commands


class SlashMenu(Static):
    """The commands matching what the prompt holds; hidden when it holds none."""

    DEFAULT_CSS = """
    SlashMenu {
        height: auto;
        padding: 0 1;
        background: $panel;
    }
    """

    def show_matches(self, text: str) -> None:
        """Update the list for the prompt's text."""
        matches = matching_commands(text)
        self.display = bool(matches)
        if not matches:
            return
        width = max(len(command.usage) for command in matches)
        lines = [
            Content.assemble(
                (command.usage.ljust(width), "bold $accent"), "  ", (command.description, "dim")
            )
            for command in matches
        ]
        lines.append(Content.styled("tab completes", "dim italic"))
        self.update(Content("\n").join(lines))
