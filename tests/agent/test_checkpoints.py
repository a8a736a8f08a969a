"""The undo checkpoints in the core: what is kept, where, and within which bounds.

Real files in a temporary folder; the window's flows are in tests/window/test_window_undo.py.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mm_tui.agent import checkpoints as module
from mm_tui.agent.checkpoints import Checkpoints
from mm_tui.support.atomic_write import write_atomically


def a_turn(store: Checkpoints, prompt: str, path: Path, data: bytes) -> None:
    """What the tool runner does around one write of a tool."""
    store.begin_turn(prompt)
    store.before_change(path)
    write_atomically(path, data)
    store.settle()
    store.end_turn()


def test_blobs_are_private_and_live_beside_the_session(tmp_path: Path) -> None:
    folder = tmp_path / "session.undo"
    store = Checkpoints(lambda: folder)
    secret = tmp_path / "secret.env"
    secret.write_text("TOKEN=1\n")
    a_turn(store, "rotate", secret, b"TOKEN=2\n")
    (turn,) = list(folder.iterdir())
    modes = {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in turn.iterdir()}
    assert modes == {"manifest.json": 0o600, "0000.bin": 0o600}
    assert stat.S_IMODE(os.stat(turn).st_mode) == 0o700
    assert (turn / "0000.bin").read_bytes() == b"TOKEN=1\n"


def test_a_turn_that_wrote_a_file_back_as_it_was_leaves_no_checkpoint(tmp_path: Path) -> None:
    folder = tmp_path / "session.undo"
    store = Checkpoints(lambda: folder)
    target = tmp_path / "same.txt"
    target.write_text("x\n")
    a_turn(store, "no-op", target, b"x\n")  # a rename rolled back leaves the file so
    assert not folder.exists() or not any(folder.iterdir())
    assert store.undo().prompt is None


def test_old_turns_are_dropped_past_the_bounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(module, "MAX_TURNS", 3)
    folder = tmp_path / "session.undo"
    store = Checkpoints(lambda: folder)
    target = tmp_path / "count.txt"
    target.write_text("0\n")
    for n in range(1, 6):
        a_turn(store, f"turn {n}", target, f"{n}\n".encode())
    assert len(list(folder.iterdir())) == 3
    assert [store.undo().prompt for _ in range(4)] == ["turn 5", "turn 4", "turn 3", None]
    assert target.read_text() == "2\n"  # turns 1 and 2 can no longer be undone


def test_the_first_content_of_a_turn_is_kept_when_a_file_is_written_twice(
    tmp_path: Path,
) -> None:
    store = Checkpoints(lambda: tmp_path / "s.undo")
    target = tmp_path / "twice.txt"
    target.write_text("first\n")
    store.begin_turn("two edits")
    for data in (b"second\n", b"third\n"):
        store.before_change(target)
        write_atomically(target, data)
        store.settle()
    store.end_turn()
    result = store.undo()
    assert result.prompt == "two edits" and target.read_text() == "first\n"


def test_undo_never_writes_through_a_link_put_in_the_files_place(tmp_path: Path) -> None:
    folder = tmp_path / "session.undo"
    store = Checkpoints(lambda: folder)
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    notes, secret = project / "notes.txt", outside / "secret.txt"
    notes.write_text("before\n")
    secret.write_text("keep\n")
    a_turn(store, "edit", notes, b"after\n")
    notes.unlink()
    notes.symlink_to(secret)
    result = store.undo(force=True)
    assert secret.read_text() == "keep\n"
    assert result.failed and "symbolic link" in result.failed[0]
