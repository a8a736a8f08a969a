"""The window's preferences: the command palette (Ctrl+P) with mm-tui's commands, the theme
(kept in the user's config), keys remapped through `keymap`, and notifications while the
terminal is unfocused. The app holds one `Preferences` and hands it its palette and keys."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from textual.app import App, SystemCommand
from textual.theme import Theme

from mm_tui.agent.events import NoticeLevel
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


def binding_owners() -> tuple[type, ...]:
    """Every class but the app whose bindings have ids a `keymap` may name (their modules
    imported here: most are screens the first frame does not show)."""
    from mm_tui.widgets.file_picker import FilePicker
    from mm_tui.widgets.help_screen import HelpScreen
    from mm_tui.widgets.output_viewer import OutputViewer
    from mm_tui.widgets.permission import PermissionQuestion, RejectionReason
    from mm_tui.widgets.pickers import GrantsScreen, ModelPicker
    from mm_tui.widgets.prompt import PromptInput
    from mm_tui.widgets.session_picker import SessionPicker
    from mm_tui.widgets.tool_row import ToolRow

    return (
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


class Preferences:
    """Palette, theme, keymap and notifications of `app`.

    `config()`: the config in effect (the trust question may load it again); `say`: a line in
    the transcript; `run_command_line`: a slash command as if typed; `owners`: the classes
    whose binding ids a keymap may name; `env`: where the user's config is found."""

    def __init__(
        self,
        app: App[int],
        config: Callable[[], Config],
        say: Callable[[NoticeLevel, str], None],
        run_command_line: Callable[[str], object],
        owners: Callable[[], tuple[type, ...]],
        env: Callable[[], Mapping[str, str] | None],
    ) -> None:
        self.app = app
        self.config = config
        self.say = say
        self.run_command_line = run_command_line
        self.owners = owners
        self.env = env
        self.notifier: Notifier | None = None
        self._kept_theme = ""

    def remapped_keys(self) -> dict[str, str]:
        """Binding id -> its keys in effect, for the help rows the keymap changes (the
        other ids of such a row included, so the row shows all its keys)."""
        keymap = {choice.binding_id: choice.keys for choice in self.config().keymap}
        if not keymap:
            return {}
        from mm_tui.keymap import effective_keys
        from mm_tui.widgets.help_screen import KEY_HELP

        shown = effective_keys(self.owners(), keymap)
        rows = [ids for _, _, ids in KEY_HELP if set(ids) & set(keymap)]
        return {binding_id: shown[binding_id] for ids in rows for binding_id in ids}

    def apply(self) -> None:
        """At mount: the config's keymap and theme; then a chosen theme is saved."""
        app, config = self.app, self.config()
        if config.keymap:  # `mm-tui` stops on a bad entry; here one is left out
            from mm_tui.keymap import keymap_problems

            bad = {b.binding_id for b in keymap_problems(config.keymap, self.owners())}
            app.set_keymap({c.binding_id: c.keys for c in config.keymap if c.binding_id not in bad})
        name = config.theme
        if name and name in app.available_themes:
            app.theme = name
        elif name:
            names = ", ".join(sorted(app.available_themes))
            self.say("warning", THEME_UNKNOWN.format(name=name, names=names))
        self._kept_theme = app.theme
        app.theme_changed_signal.subscribe(app, self._theme_changed)
        env = self.env()
        self.notifier = Notifier(
            config.notifications,
            self._write_to_terminal,
            lambda: app.app_focus,
            os.environ if env is None else env,
        )

    # -- the palette ----------------------------------------------------------------------

    def system_commands(self) -> Iterable[SystemCommand]:
        """mm-tui's commands: every slash command, and the theme."""
        for command in COMMANDS:
            title = PALETTE_TITLES.get(command.name, command.name)
            yield SystemCommand(
                title,
                f"{command.name} — {command.description}",
                lambda name=command.name: self._run_command(name),
            )
        yield SystemCommand(THEME_COMMAND, THEME_HELP, self.app.action_change_theme)

    def _run_command(self, name: str) -> None:
        if len(self.app.screen_stack) == 1:
            self.run_command_line(name)

    # -- the theme ------------------------------------------------------------------------

    def _theme_changed(self, theme: Theme) -> None:
        """A theme picked in the palette goes into the user's config (a failure is said)."""
        if theme.name == self._kept_theme:
            return
        self._kept_theme = theme.name
        from mm_tui.agent.config.preferences import PreferenceNotSaved, save_preference

        try:
            path = save_preference("theme", theme.name, self.env())
        except PreferenceNotSaved as exc:
            log.debug("theme not saved", exc_info=True)
            self.say("warning", THEME_NOT_SAVED.format(name=theme.name, reason=exc))
            return
        config = self.config()
        source = config.source
        if "theme" in config.file_keys and source is not None and source != path:
            self.say("warning", THEME_OVERRIDDEN.format(name=theme.name, path=path, source=source))
        else:
            self.say("info", THEME_SAVED.format(name=theme.name, path=path))

    # -- notifications --------------------------------------------------------------------

    def notify_if_away(self, text: str) -> None:
        """A turn ended or a question waits: bell and desktop notification if unfocused."""
        if self.notifier is not None:
            self.notifier.notify(text)

    def _write_to_terminal(self, data: str) -> None:
        # Textual has no public way to write to the terminal; `App.bell` and the clipboard
        # write through the driver the same way (pinned: tests/architecture/test_textual_private.py).
        from mm_tui.widgets.textual_private import app_driver

        driver = app_driver(self.app)
        if driver is not None:
            driver.write(data)
