"""Window preferences in the config: `theme`, `keymap`, `notifications` — their
checks, where they come from when a project config wins, and the theme saved into the user's
config with the rest of the file kept."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mm_tui.agent.config import ConfigError, load_config, parse_config_text
from mm_tui.agent.config.model import KeyChoice, Notifications
from mm_tui.agent.config.preferences import (
    PreferenceNotSaved,
    save_preference,
    user_config_path,
    with_top_level_key,
)
from mm_tui.agent.trust import trust

FILE = Path("/x/.mm.yaml")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }


def test_the_three_preferences_parse_with_the_keymap_lines_kept() -> None:
    text = (
        "model: m\n"
        "theme: nord\n"
        "keymap:\n"
        "  app.help: f5\n"
        "  app.command_palette: ctrl+k,f6\n"
        "notifications: {bell: false, desktop: both}\n"
    )
    config = parse_config_text(text, FILE)
    assert config.theme == "nord"
    assert config.keymap == (
        KeyChoice("app.help", "f5", 4),
        KeyChoice("app.command_palette", "ctrl+k,f6", 5),
    )
    assert config.notifications == Notifications(bell=False, desktop="both")


def test_notifications_false_turns_everything_off_and_true_is_the_default() -> None:
    assert parse_config_text("notifications: false\n", FILE).notifications == Notifications(
        False, "off"
    )
    assert parse_config_text("notifications: true\n", FILE).notifications == Notifications()
    assert parse_config_text("model: m\n", FILE).notifications == Notifications(True, "osc9")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "notifications: {desktop: growl}\n",
            "config error in /x/.mm.yaml line 1: key 'notifications.desktop': "
            'expected "off", "osc9", "osc777" or "both", got \'growl\'',
        ),
        (
            "notifications: {sound: true}\n",
            "config error in /x/.mm.yaml line 1: key 'notifications.sound': "
            "unknown key (known keys: bell, desktop)",
        ),
        (
            "keymap: [f5]\n",
            "config error in /x/.mm.yaml line 1: key 'keymap': "
            "expected a mapping of binding ids to keys, like app.help: f5, got ['f5']",
        ),
        (
            "keymap:\n  app.help: 5\n",
            "config error in /x/.mm.yaml line 2: key 'keymap.app.help': "
            "expected keys, like ctrl+k or f5,ctrl+h, got 5",
        ),
        (
            "theme: [nord]\n",
            "config error in /x/.mm.yaml line 1: key 'theme': "
            "expected a theme name, like textual-dark or nord, got ['nord']",
        ),
    ],
)
def test_a_bad_preference_is_one_line_naming_the_file_line_and_key(
    text: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config_text(text, FILE)
    assert str(caught.value) == expected


def test_a_project_config_leaves_the_users_theme_and_notifications_in_place(
    tmp_path: Path, env: dict[str, str]
) -> None:
    user = user_config_path(env)
    user.parent.mkdir(parents=True)
    user.write_text("theme: nord\nnotifications: false\nkeymap: {app.help: f5}\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mm.yaml").write_text("model: from-project\n")
    config = load_config(cwd=project, env=env)
    assert config.model == "from-project"
    assert config.theme == "nord"
    assert config.notifications == Notifications(False, "off")
    assert [c.binding_id for c in config.keymap] == ["app.help"]
    (project / ".mm.yaml").write_text("model: m\ntheme: dracula\nnotifications: true\n")
    config = load_config(cwd=project, env=env)
    assert (config.theme, config.notifications) == ("dracula", Notifications())  # it wins


def test_an_untrusted_project_keymap_is_not_obeyed_until_trusted(
    tmp_path: Path, env: dict[str, str]
) -> None:
    project = tmp_path / "clone"
    project.mkdir()
    # A clone swapping "reject" and "allow for the session" would turn a refusal into a grant.
    (project / ".mm.yaml").write_text(
        "theme: gruvbox\nkeymap: {question.reject: s, question.allow_session: r}\n"
    )
    config = load_config(cwd=project, env=env)
    assert config.keymap == () and config.untrusted == ("keymap",)
    assert config.theme == "gruvbox"  # a colour scheme is harmless
    trust(project, env)
    assert len(load_config(cwd=project, env=env).keymap) == 2


def test_the_theme_replaces_its_line_and_keeps_comments_and_other_keys() -> None:
    text = "# my setup\nmodel: qwen  # the fast one\ntheme: nord\n\nkeymap:\n  app.help: f5\n"
    assert with_top_level_key(text, "theme", "dracula") == (
        "# my setup\nmodel: qwen  # the fast one\ntheme: dracula\n\nkeymap:\n  app.help: f5\n"
    )
    assert with_top_level_key("model: m", "theme", "nord") == "model: m\ntheme: nord\n"
    assert with_top_level_key("", "theme", "nord") == "theme: nord\n"
    # an indented `theme:` belongs to another mapping; a value that needs quotes gets them
    nested = "other:\n  theme: x\n"
    assert with_top_level_key(nested, "theme", "a b") == nested + 'theme: "a b"\n'


def test_saving_writes_the_user_config_atomically_and_it_reads_back(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = save_preference("theme", "nord", env)
    assert path == tmp_path / "xdg-config" / "mm" / "config.yaml"
    assert path.read_text() == "theme: nord\n"
    assert path.stat().st_mode & 0o777 == 0o600  # it may come to hold an apiKey
    path.write_text("model: m  # mine\ntheme: nord\n")
    save_preference("theme", "dracula", env)
    assert path.read_text() == "model: m  # mine\ntheme: dracula\n"
    assert load_config(cwd=tmp_path, env=env).theme == "dracula"
    assert not [p for p in path.parent.iterdir() if p.name != "config.yaml"]  # no temporary left


def test_a_file_the_edit_would_break_or_cannot_write_is_left_as_it_is(
    tmp_path: Path, env: dict[str, str]
) -> None:
    path = user_config_path(env)
    path.parent.mkdir(parents=True)
    path.write_text("{model: m}\n")  # flow style: a line added after it is not YAML
    with pytest.raises(PreferenceNotSaved, match="left as it is: the edit would not read back"):
        save_preference("theme", "nord", env)
    assert path.read_text() == "{model: m}\n"
    path.write_text("model: m\n")
    path.chmod(0o444)
    with pytest.raises(
        PreferenceNotSaved, match=r"cannot write .*config\.yaml \(the file is read-only"
    ):
        save_preference("theme", "nord", env)
    assert path.read_text() == "model: m\n"
    if os.geteuid() != 0:  # root writes into any directory
        path.chmod(0o644)
        path.parent.chmod(0o555)
        try:
            with pytest.raises(PreferenceNotSaved, match="cannot write"):
                save_preference("theme", "nord", env)
        finally:
            path.parent.chmod(0o755)
