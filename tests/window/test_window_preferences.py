"""The window's preferences: the command palette on Ctrl+P, the theme kept in the
user's config, keys remapped through `keymap`, and notifications while unfocused.

Pilot tests (the palette against the real Agent and the scripted server); the keymap's checks
also through the real `mm-tui` command; notifications by capturing what the driver writes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.command import CommandList, CommandPalette
from textual.drivers.headless_driver import HeadlessDriver

from mm_tui.agent.config import Config
from mm_tui.agent.config.model import KeyChoice, Notifications
from mm_tui.agent.events import PermissionRequest, TurnEnded
from mm_tui.app import MMApp
from mm_tui.keymap import keymap_problems
from mm_tui.widgets.blocks import NoticeLine
from mm_tui.widgets.help_screen import HelpScreen, shown_rows
from mm_tui.window.notifications import notification_escapes
from tests.window.conftest import play, settle, wait_for

pytestmark = pytest.mark.anyio


def notices(app: MMApp) -> list[str]:
    return [line.text for line in app.query(NoticeLine)]


async def open_palette_and_pick(pilot: Any, query: str, hit: str) -> None:
    """Ctrl+P, type `query`, wait for `hit` among the matches, Enter on it."""
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: CommandPalette.is_open(app), "the palette opens")
    await pilot.press(*query)

    def highlighted() -> str:
        options = app.screen.query_one(CommandList)
        index = options.highlighted
        return "" if index is None else str(options.get_option_at_index(index).prompt)

    await wait_for(pilot, lambda: highlighted().startswith(hit), f"{hit!r} is the first match")
    await pilot.press("enter")
    await settle(pilot)


# -- the palette --------------------------------------------------------------------------------


async def test_the_palette_lists_mm_tuis_commands_and_runs_them(live_app: Any) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        titles = [command.title for command in app.get_system_commands(app.screen)]
        for title in ("New session", "Toggle yolo", "Switch model", "Export the transcript"):
            assert title in titles
        assert "Theme" in titles and "Screenshot" not in titles
        await open_palette_and_pick(pilot, "yolo", "Toggle yolo")
        await wait_for(pilot, lambda: app.turns.permission_state("/yolo") is not None, "state")
        state = app.turns.permission_state("/yolo")
        assert state is not None and state.yolo
        assert "yolo on: tools run without asking" in notices(app)


async def test_the_palette_does_not_open_over_another_screen(still_app: Any) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await pilot.press("f1")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help is shown")
        await pilot.press("ctrl+p")
        await settle(pilot)
        assert not CommandPalette.is_open(app)


# -- the theme ----------------------------------------------------------------------------------


async def test_a_theme_chosen_in_the_palette_is_kept_in_the_user_config(
    still_app: Any, tmp_path: Path
) -> None:
    user = tmp_path / "config" / "mm" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("# mine\nmodel: qwen\n")
    app = still_app()
    async with app.run_test() as pilot:
        await open_palette_and_pick(pilot, "theme", "Theme")
        await wait_for(pilot, lambda: CommandPalette.is_open(app), "the theme list opens")
        await pilot.press(*"nord")
        await wait_for(pilot, lambda: app.screen.query_one(CommandList).option_count == 1, "nord")
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.theme == "nord", "the theme changes")
        await wait_for(pilot, lambda: bool(notices(app)), "a line says where it went")
        assert notices(app) == [f"theme nord kept in {user}"]
    assert user.read_text() == "# mine\nmodel: qwen\ntheme: nord\n"
    again = still_app(Config(model="m", theme="nord"))
    async with again.run_test() as pilot:
        await settle(pilot)
        assert again.theme == "nord"


async def test_a_theme_that_cannot_be_kept_is_used_and_said(still_app: Any, tmp_path: Path) -> None:
    user = tmp_path / "config" / "mm" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("model: qwen\n")
    user.chmod(0o444)
    app = still_app()
    async with app.run_test() as pilot:
        app.theme = "dracula"
        await wait_for(pilot, lambda: bool(notices(app)), "a line says it was not kept")
        assert app.theme == "dracula"
        (line,) = notices(app)
        assert line.startswith("theme dracula is used but not kept: cannot write ")
        assert "read-only" in line
    assert user.read_text() == "model: qwen\n"


async def test_an_unknown_theme_in_the_config_is_said_and_the_default_kept(
    still_app: Any,
) -> None:
    app = still_app(Config(model="m", theme="no-such-theme"))
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: bool(notices(app)), "a line about the theme")
        assert app.theme == "textual-dark"
        assert notices(app)[0].startswith("theme 'no-such-theme' (config) is not a theme")


# -- the keymap ---------------------------------------------------------------------------------


async def test_a_remapped_key_opens_help_and_the_old_one_no_longer_does(still_app: Any) -> None:
    keymap = (KeyChoice("app.help", "f5"), KeyChoice("app.command_palette", "ctrl+k"))
    app = still_app(Config(model="m", keymap=keymap))
    async with app.run_test() as pilot:
        await pilot.press("f1")
        await settle(pilot)
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "F5 opens help")
        assert isinstance(app.screen, HelpScreen)
        rows = dict((does, keys) for keys, does in shown_rows(app.screen.remapped))
        assert rows["this help"] == "F5"
        assert (
            rows["command palette: every command, yolo, model, resume, export, theme"] == "Ctrl+K"
        )
        assert rows["walk the prompt history (kept across runs)"] == "Up, Down"  # as written
        await pilot.press("escape")
        await pilot.press("ctrl+k")
        await wait_for(pilot, lambda: CommandPalette.is_open(app), "Ctrl+K opens the palette")


def test_keymap_mistakes_are_found_each_with_its_reason() -> None:
    owners = MMApp.binding_owners()
    choices = (
        KeyChoice("app.hlep", "f5", 3),
        KeyChoice("app.help", "ctrl+pp", 4),
        KeyChoice("app.top", "ctrl+q", 5),
        KeyChoice("row.raw", "f7", 6),
        KeyChoice("row.full_output", "f7", 7),
        KeyChoice("app.bottom", "x", 8),
        KeyChoice("question.allow_once", "y", 9),
        KeyChoice("app.interrupt", "enter", 10),
        KeyChoice("app.page_up", "ctrl+o", 11),
    )
    found = {(bad.binding_id, bad.line): bad.keys for bad in keymap_problems(choices, owners)}
    assert found[("app.hlep", 3)].startswith("unknown binding id (known: app.bottom, ")
    assert found[("app.help", 4)] == "'ctrl+pp' is not a key (keys look like ctrl+k, f5, pageup, x)"
    assert found[("app.top", 5)] == "ctrl+q is also app.quit's key: give one of them another key"
    assert found[("row.raw", 6)] == "f7 is also row.full_output's key: give one of them another key"
    assert (
        found[("app.bottom", 8)]
        == "'x' is typed in the prompt: give ctrl+…, alt+… or a key like F5"
    )
    assert ("question.allow_once", 9) not in found  # a question's own key may be a letter
    # Esc and PgUp win everywhere: moved onto Enter or a row's Ctrl+O they would take it.
    assert found[("app.interrupt", 10)] == (
        "enter would be taken from the prompt (this key wins everywhere)"
    )
    assert found[("app.page_up", 11)] == (
        "ctrl+o would be taken from row.full_output (this key wins everywhere)"
    )
    assert len(found) == 8


def test_two_bindings_may_swap_keys_in_the_keymap() -> None:
    swap = (KeyChoice("app.help", "f2"), KeyChoice("app.focus_question", "f1"))
    assert keymap_problems(swap, MMApp.binding_owners()) == []
    # Ctrl+Q's action wins everywhere: on F1 it would quit from the help page F1 closes.
    onto_f1 = (KeyChoice("app.help", "ctrl+q"), KeyChoice("app.quit", "f1"))
    [problem] = keymap_problems(onto_f1, MMApp.binding_owners())
    assert problem.keys == "f1 would be taken from help.close (this key wins everywhere)"


def test_mm_tui_stops_on_a_bad_keymap_with_one_line_per_entry(tmp_path: Path) -> None:
    (tmp_path / "mine.yaml").write_text("model: m\nkeymap:\n  app.hlep: f5\n  app.help: ctrl+q\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    result = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "--config", str(tmp_path / "mine.yaml")],
        cwd=tmp_path,
        env={**env, "HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2, result.stderr
    where = f"mm-tui: config error in {tmp_path / 'mine.yaml'}"
    assert lines[0].startswith(f"{where} line 3: key 'keymap.app.hlep': unknown binding id")
    assert lines[1] == (
        f"{where} line 4: key 'keymap.app.help': ctrl+q is also app.quit's key: "
        "give one of them another key"
    )
    assert "Traceback" not in result.stderr


# -- notifications ------------------------------------------------------------------------------


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the app writes to its terminal (the headless driver's writes, kept)."""
    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: written.append(data))
    return written


def question() -> PermissionRequest:
    from concurrent.futures import Future

    return PermissionRequest("c1", "bash", "bash rm -rf build", "rm -rf build", None, Future())


async def test_an_unfocused_terminal_gets_a_bell_and_a_desktop_notification(
    still_app: Any, terminal: list[str]
) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await settle(pilot)
        terminal.clear()
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, "the terminal is unfocused")
        await play(pilot, [question()])
        assert terminal == ["\x07\x1b]9;mm-tui: waiting for your answer: bash rm -rf build\x07"]
        terminal.clear()
        await play(pilot, [TurnEnded("answered")])
        assert terminal == ["\x07\x1b]9;mm-tui: the turn is done\x07"]
        terminal.clear()
        await play(pilot, [TurnEnded("error", "the server is down")])
        assert terminal == ["\x07\x1b]9;mm-tui: the turn ended: the server is down\x07"]
        terminal.clear()
        app.post_message(events.AppFocus())
        await wait_for(pilot, lambda: app.app_focus, "the terminal is focused again")
        await play(pilot, [TurnEnded("answered")])
        assert not [data for data in terminal if "\x07" in data]  # the person is here


async def test_notifications_off_write_nothing_and_an_interruption_is_not_told(
    still_app: Any, terminal: list[str]
) -> None:
    app = still_app(Config(model="m", notifications=Notifications(False, "off")))
    async with app.run_test() as pilot:
        await settle(pilot)
        terminal.clear()
        app.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not app.app_focus, "the terminal is unfocused")
        await play(pilot, [question(), TurnEnded("answered")])
        assert not [data for data in terminal if "\x07" in data]
    interrupted = still_app()
    async with interrupted.run_test() as pilot:
        interrupted.post_message(events.AppBlur())
        await wait_for(pilot, lambda: not interrupted.app_focus, "unfocused")
        terminal.clear()
        await play(pilot, [TurnEnded("interrupted")])
        assert not [data for data in terminal if "\x07" in data]


def test_the_escapes_for_each_setting_inside_tmux_too_and_nothing_hidden_gets_through() -> None:
    both = Notifications(bell=False, desktop="both")
    assert notification_escapes(both, "done; ok") == (
        "\x1b]9;mm-tui: done, ok\x07\x1b]777;notify;mm-tui;done, ok\x07"
    )
    assert notification_escapes(Notifications(True, "osc777"), "x") == (
        "\x07\x1b]777;notify;mm-tui;x\x07"
    )
    assert notification_escapes(Notifications(True, "osc9"), "x", in_tmux=True) == (
        "\x07\x1bPtmux;\x1b\x1b]9;mm-tui: x\x07\x1b\\"
    )
    # A command's own escape sequence or BEL cannot end the notification early.
    hostile = notification_escapes(Notifications(False, "osc9"), "a\x07\x1b]0;pwned\x07b\nmore")
    assert hostile == "\x1b]9;mm-tui: ab\x07"
    assert notification_escapes(Notifications(False, "off"), "x") == ""
