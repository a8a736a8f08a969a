"""Attacks on what lies between two processes: an export never replaces a
file (the person's, or one a link planted there points to), exports and the prompt history are
private, and the history does not grow without end.

Sessions written by two processes are covered in tests/agent/test_session_store.py (one writer
per session). The commands run through the window's own `SlashCommands` with a real turn
controller; the history through `PromptHistory` on real files.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from mm_tui.agent.config import Config
from mm_tui.widgets.prompt_history import HISTORY_LIMIT, PromptHistory
from mm_tui.window.commands import EXPORT_EXISTS, EXPORTED, SlashCommands, export_file_name
from tests.window.test_turn_controller import Harness


@pytest.fixture
def commands(tmp_path: Path) -> Iterator[tuple[SlashCommands, Harness]]:
    harness = Harness(Config(model="scripted-model"), tmp_path)
    old_umask = os.umask(0o022)  # the usual umask: a plain file would be 0644
    try:
        yield SlashCommands(harness.turns, harness.surface, tmp_path), harness
    finally:
        os.umask(old_umask)


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_export_to_a_name_that_exists_is_refused_with_a_line(
    commands: tuple[SlashCommands, Harness], tmp_path: Path
) -> None:
    slash, harness = commands
    mine = tmp_path / "notes.md"
    mine.write_text("my own notes\n")
    assert slash.handle("/export notes.md")
    assert mine.read_text() == "my own notes\n"
    assert harness.surface.notices == [("warning", EXPORT_EXISTS.format(path=mine))]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.md"]  # no temporary left


def test_export_never_follows_a_link_planted_at_its_name(
    commands: tuple[SlashCommands, Harness], tmp_path: Path
) -> None:
    slash, harness = commands
    victim = tmp_path / "elsewhere" / "autostart.sh"
    victim.parent.mkdir()
    (tmp_path / "talk.md").symlink_to(victim)  # dangling: nothing there yet
    assert slash.handle("/export talk.md")
    assert not victim.exists()
    assert harness.surface.notices == [("warning", EXPORT_EXISTS.format(path=tmp_path / "talk.md"))]


def test_an_export_is_a_new_private_file(
    commands: tuple[SlashCommands, Harness], tmp_path: Path
) -> None:
    slash, harness = commands
    assert slash.handle("/export talk.md")
    target = tmp_path / "talk.md"
    assert harness.surface.notices == [("info", EXPORTED.format(path=target))]
    assert mode_of(target) == 0o600
    assert "- model: scripted-model" in target.read_text()


def test_the_default_export_name_moves_on_when_taken(
    commands: tuple[SlashCommands, Harness], tmp_path: Path
) -> None:
    slash, harness = commands
    now = datetime.now()
    taken = [tmp_path / export_file_name(now + timedelta(seconds=s)) for s in range(3)]
    for path in taken:
        path.write_text("an earlier export\n")
    assert slash.handle("/export")
    ((level, text),) = harness.surface.notices
    written = Path(text.removeprefix("transcript exported to "))
    assert level == "info" and written.name.endswith("-2.md")
    assert written.parent == tmp_path and written.stem.removesuffix("-2") in [p.stem for p in taken]
    assert "# mm-tui transcript" in written.read_text() and mode_of(written) == 0o600
    assert all(path.read_text() == "an earlier export\n" for path in taken)


def test_the_prompt_history_is_private_even_when_it_was_not(tmp_path: Path) -> None:
    old_umask = os.umask(0o022)
    try:
        fresh = tmp_path / "fresh" / "prompt_history.jsonl"
        PromptHistory(fresh).add("my token is hunter2")
        assert mode_of(fresh) == 0o600
        older = tmp_path / "older.jsonl"
        older.write_text(json.dumps("from an older mm-tui") + "\n")
        older.chmod(0o644)
        PromptHistory(older).add("next")
        assert mode_of(older) == 0o600
    finally:
        os.umask(old_umask)


def test_the_prompt_history_keeps_the_last_entries_only(tmp_path: Path) -> None:
    path = tmp_path / "prompt_history.jsonl"
    history = PromptHistory(path)
    total = HISTORY_LIMIT * 2 + 37
    for number in range(total):
        history.add(f"message {number}")
    expected = [f"message {n}" for n in range(total - HISTORY_LIMIT, total)]
    assert history.entries == expected
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= HISTORY_LIMIT + HISTORY_LIMIT // 10
    assert PromptHistory(path).entries == expected
    assert mode_of(path) == 0o600
