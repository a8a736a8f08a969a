"""The one atomic writer: `durable=True` (sessions) flushes file and directory; every caller
keeps the read-only refusal and the file's mode."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mm_tui.support import atomic_write
from mm_tui.support.atomic_write import write_atomically


def _spy_fsync(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    synced: list[str] = []
    real = os.fsync

    def spy(descriptor: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{descriptor}"))
        real(descriptor)

    monkeypatch.setattr(atomic_write.os, "fsync", spy)
    return synced


def test_a_durable_write_syncs_the_file_then_its_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = _spy_fsync(monkeypatch)
    target = tmp_path / "sessions" / "s.json"
    write_atomically(target, b'{"a": 1}', durable=True)
    assert target.read_bytes() == b'{"a": 1}'
    assert len(synced) == 2
    assert synced[0].startswith(str(target.parent / ".s.json."))  # the temporary, before rename
    assert synced[1] == str(target.parent)
    assert sorted(p.name for p in target.parent.iterdir()) == ["s.json"]


def test_an_ordinary_write_does_not_sync(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced = _spy_fsync(monkeypatch)
    write_atomically(tmp_path / "a.txt", b"x")
    assert synced == [] and (tmp_path / "a.txt").read_bytes() == b"x"


@pytest.mark.parametrize("durable", [False, True])
def test_a_read_only_file_is_refused_and_kept_whatever_the_flag(
    tmp_path: Path, durable: bool
) -> None:
    target = tmp_path / "locked.json"
    target.write_text("old")
    target.chmod(0o444)
    with pytest.raises(PermissionError, match="read-only"):
        write_atomically(target, b"new", durable=durable)
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["locked.json"]


@pytest.mark.parametrize("durable", [False, True])
def test_the_mode_of_the_file_is_kept_whatever_the_flag(tmp_path: Path, durable: bool) -> None:
    target = tmp_path / "private.json"
    target.write_text("old")
    target.chmod(0o600)
    write_atomically(target, b"new", durable=durable)
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o600


def test_a_new_file_may_be_created_private(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    write_atomically(target, b"{}", durable=True, new_file_mode=0o600)
    assert target.stat().st_mode & 0o777 == 0o600
