"""Files as the disk has them now, read again only when their stat says they changed.

The disk is the truth (SPEC §4: every request follows the file's current content), but a
warm call must not pay a read and a comparison of every file it touches (bench/bench_lsp.py:
definition on basedpyright within 1.2x of a direct request). A file is re-read when its
modification time, size, inode or change time moved — or when its last read happened so soon
after its last write that a second write could share the same timestamp (git's "racily clean"
rule): such a file is read again until it is old enough to be trusted.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from mm_tui.lsp.text import shared_lines

#: A write this recent (nanoseconds) may be followed by another within the same timestamp.
_RACY_NS = 1_000_000_000

Stamp = tuple[int, int, int, int]


@dataclass(frozen=True)
class _Snapshot:
    stamp: Stamp
    text: str
    trusted: bool  # read long enough after its last write to skip the next read


def read_text(path: Path | str) -> str:
    """A file's text as sent to a server; undecodable bytes become U+FFFD."""
    with open(path, "rb") as file:
        return file.read().decode("utf-8", "replace")


def _stamp(path: Path | str) -> Stamp:
    status = os.stat(path)
    return (status.st_mtime_ns, status.st_size, status.st_ino, status.st_ctime_ns)


class DiskTexts:
    """The current text (and lines) of each file read, from a stat when it did not move."""

    def __init__(self) -> None:
        self._snapshots: dict[str, _Snapshot] = {}

    def read(self, path: Path | str) -> str:
        """The file's text now; raises OSError like reading it would."""
        key = os.fspath(path)
        stamp = _stamp(key)
        known = self._snapshots.get(key)
        if known is not None and known.trusted and known.stamp == stamp:
            return known.text
        text = read_text(path)
        steady = _stamp(path) == stamp  # no write while it was read
        trusted = steady and time.time_ns() - stamp[0] > _RACY_NS
        self._snapshots[key] = _Snapshot(stamp, text, trusted)
        return text

    def lines(self, path: Path | str) -> list[str]:
        """The file's LSP lines now ([] when it cannot be read); shared, only to be read."""
        try:
            return shared_lines(self.read(path))
        except OSError:
            return []

    def forget(self, path: Path) -> None:
        """Drop what is known of a file (after mm-tui itself wrote it)."""
        self._snapshots.pop(os.fspath(path), None)
