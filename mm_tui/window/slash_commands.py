"""The slash commands of SPEC §7: their table, parsing and completion (no widget: plain data).

The menu under the prompt (`mm_tui.widgets.slash_menu`) and the help page read this table; the
commands themselves run in `mm_tui.window.commands`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    """One command: its name (with the slash), how to call it, and what it does."""

    name: str
    usage: str
    description: str


COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("/new", "/new", "start a new session (history and loop detector reset)"),
    SlashCommand("/compact", "/compact", "summarise the history to free the context"),
    SlashCommand("/help", "/help", "keys and commands"),
    SlashCommand("/model", "/model [name]", "list the server's models, or switch to one"),
    SlashCommand("/yolo", "/yolo", "toggle yolo: tools run without asking"),
    SlashCommand(
        "/permissions",
        "/permissions [ask|allow|revoke <tool>]",
        "the config's rules and the session's grants (Enter revokes a grant)",
    ),
    SlashCommand("/export", "/export [file.md]", "write the transcript as Markdown"),
    SlashCommand(
        "/resume", "/resume [id]", "pick one of this directory's sessions and go on in it"
    ),
    SlashCommand(
        "/queue", "/queue [clear]", "send the messages kept after Esc, or drop them (clear)"
    ),
    SlashCommand(
        "/undo",
        "/undo [force]",
        "put back the files the last turn changed; its message returns to the prompt",
    ),
    SlashCommand("/init", "/init", "ask the model to write a starter AGENTS.md for the project"),
    SlashCommand("/quit", "/quit", "quit (stops language servers and commands)"),
)
UNKNOWN_COMMAND = "unknown command {name} — /help lists the commands"
_COMMAND_WORD = re.compile(r"/[a-z]+")


def _prefix_matches(word: str) -> list[SlashCommand]:
    return [command for command in COMMANDS if command.name.startswith(word)]


def matching_commands(text: str) -> list[SlashCommand]:
    """Commands the prompt could be starting: only while it is one word beginning with `/`."""
    if not text.startswith("/") or any(char.isspace() for char in text):
        return []
    return _prefix_matches(text)


def complete_command(text: str) -> str | None:
    """The completed prompt for Tab, or None when there is nothing to add."""
    matches = matching_commands(text)
    if not matches:
        return None
    if len(matches) == 1:
        return matches[0].name + " "
    common = os.path.commonprefix([command.name for command in matches])
    return common if len(common) > len(text) else None


def parse_command(text: str) -> tuple[SlashCommand | None, str, str] | None:
    """(command or None if unknown, the word typed, the argument) for a slash command.

    None when the text is a message to the model, like a path `/etc/hosts is …`.
    A unique prefix is enough (`/exp` means `/export`).
    """
    stripped = text.strip()
    word, _, argument = stripped.partition(" ")
    if not _COMMAND_WORD.fullmatch(word):
        return None
    exact = [command for command in COMMANDS if command.name == word]
    matches = exact or _prefix_matches(word)
    command = matches[0] if len(matches) == 1 else None
    return command, word, argument.strip()
