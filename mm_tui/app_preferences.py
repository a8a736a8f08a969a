"""The window's preferences (issue 14): the command palette (Ctrl+P) with mm-tui's commands, the
theme (kept in the user's config), keys remapped through `keymap`, and notifications while
the terminal is unfocused.

A base class of `MMApp`, between it and `WindowKeys` (Textual merges the BINDINGS of every App
class in the chain), so the app module keeps to drawing the core's events.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from textual.app import SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import Theme

from mm_tui.agent.events import NoticeLevel
from mm_tui.app_keys import WindowKeys
from mm_tui.window.notifications import Notifier
from mm_tui.window.slash_commands import COMMANDS

if TYPE_CHECKING:
    from mm_tui.agent.config import Config

log = logging.getLogger(__name__)

#: The palette's name for a slash command (a command not listed here shows as its name).
PALETTE_TITLES: dict[str, str] = {
    "/new": "New session",
    "/compact": "Compact the conversation",
    "/help": "Help: keys and commands",
    "/model": "Switch model",
    "/yolo": "Toggle yolo",
    "/permissions": "Permissions and session grants",
    "/export": "Export the transcript",
    "/resume": "Resume a session",
    "/init": "Write a starter AGENTS.md",
    "/queue": "Queued messages: send them, or clear",
    "/undo": "Undo the last turn's file changes",
    "/quit": "Quit",
}
THEME_COMMAND = "Theme"
THEME_HELP = "change the colours (kept in your config)"
THEME_SAVED = "theme {name} kept in {path}"
THEME_NOT_SAVED = "theme {name} is used but not kept: {reason}"
THEME_OVERRIDDEN = "theme {name} kept in {path}; {source} sets its own theme, which wins here"
THEME_UNKNOWN = "theme {name!r} (config) is not a theme of this Textual; themes: {names}"


class WindowPreferences(WindowKeys):
    """Palette, theme, keymap and notifications; `MMApp` provides the config and commands."""

    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            show=False,
            priority=True,
            id="app.command_palette",
        ),
    ]

    #: The environment the user's config is found in (XDG_CONFIG_HOME); tests give their own.
    preferences_env: Mapping[str, str] | None = None

    @classmethod
    def binding_owners(cls) -> tuple[type, ...]:
        """Every class whose bindings have ids a `keymap` may name (their modules imported
        here: most are screens the first frame does not show)."""
        from mm_tui.widgets.file_picker import FilePicker
        from mm_tui.widgets.help_screen import HelpScreen
        from mm_tui.widgets.output_viewer import OutputViewer
        from mm_tui.widgets.permission import PermissionQuestion, RejectionReason
        from mm_tui.widgets.pickers import GrantsScreen, ModelPicker
        from mm_tui.widgets.prompt import PromptInput
        from mm_tui.widgets.session_picker import SessionPicker
        from mm_tui.widgets.tool_row import ToolRow

        return (
            cls,
            PromptInput,
            ToolRow,
            PermissionQuestion,
            RejectionReason,
            FilePicker,
            HelpScreen,
            OutputViewer,
            ModelPicker,
            GrantsScreen,
            SessionPicker,
        )

    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.notifier: Notifier | None = None
        self._kept_theme = ""

    def remapped_keys(self) -> dict[str, str]:
        """Binding id -> its keys in effect, for the help rows the keymap changes (the
        other ids of such a row included, so the row shows all its keys)."""
        keymap = {choice.binding_id: choice.keys for choice in self.config.keymap}
        if not keymap:
            return {}
        from mm_tui.keymap import effective_keys
        from mm_tui.widgets.help_screen import KEY_HELP

        shown = effective_keys(self.binding_owners(), keymap)
        rows = [ids for _, _, ids in KEY_HELP if set(ids) & set(keymap)]
        return {binding_id: shown[binding_id] for ids in rows for binding_id in ids}

    def apply_preferences(self) -> None:
        """At mount: the config's keymap and theme; then a chosen theme is saved."""
        if self.config.keymap:  # `mm-tui` stops on a bad entry; here one is left out
            from mm_tui.keymap import keymap_problems

            bad = {b.binding_id for b in keymap_problems(self.config.keymap, self.binding_owners())}
            self.set_keymap(
                {c.binding_id: c.keys for c in self.config.keymap if c.binding_id not in bad}
            )
        name = self.config.theme
        if name and name in self.available_themes:
            self.theme = name
        elif name:
            names = ", ".join(sorted(self.available_themes))
            self.say_preference("warning", THEME_UNKNOWN.format(name=name, names=names))
        self._kept_theme = self.theme
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        env = os.environ if self.preferences_env is None else self.preferences_env
        self.notifier = Notifier(
            self.config.notifications, self._write_to_terminal, lambda: self.app_focus, env
        )

    def say_preference(self, level: NoticeLevel, text: str) -> None:
        """A line in the transcript (the app draws it)."""
        raise NotImplementedError

    # -- the palette ----------------------------------------------------------------------

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """mm-tui's commands: every slash command, and the theme."""
        for command in COMMANDS:
            title = PALETTE_TITLES.get(command.name, command.name)
            yield SystemCommand(
                title,
                f"{command.name} — {command.description}",
                lambda name=command.name: self._run_command(name),
            )
        yield SystemCommand(THEME_COMMAND, THEME_HELP, self.action_change_theme)

    def _run_command(self, name: str) -> None:
        if len(self.screen_stack) == 1:
            self.run_command_line(name)

    def run_command_line(self, text: str) -> None:
        """Run a slash command as if typed (the app's commands)."""
        raise NotImplementedError

    # -- the theme ------------------------------------------------------------------------

    def _theme_changed(self, theme: Theme) -> None:
        """A theme picked in the palette goes into the user's config (a failure is said)."""
        if theme.name == self._kept_theme:
            return
        self._kept_theme = theme.name
        from mm_tui.agent.config.preferences import PreferenceNotSaved, save_preference

        try:
            path = save_preference("theme", theme.name, self.preferences_env)
        except PreferenceNotSaved as exc:
            log.debug("theme not saved", exc_info=True)
            self.say_preference("warning", THEME_NOT_SAVED.format(name=theme.name, reason=exc))
            return
        source = self.config.source
        if "theme" in self.config.file_keys and source is not None and source != path:
            line = THEME_OVERRIDDEN.format(name=theme.name, path=path, source=source)
            self.say_preference("warning", line)
        else:
            self.say_preference("info", THEME_SAVED.format(name=theme.name, path=path))

    # -- notifications --------------------------------------------------------------------

    def notify_if_away(self, text: str) -> None:
        """A turn ended or a question waits: bell and desktop notification if unfocused."""
        if self.notifier is not None:
            self.notifier.notify(text)

    def _write_to_terminal(self, data: str) -> None:
        # Textual has no public way to write to the terminal; `App.bell` and the clipboard
        # write through the driver the same way (pinned: tests/architecture/test_private_apis).
        driver = self._driver
        if driver is not None:
            driver.write(data)
