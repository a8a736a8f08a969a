"""The whole output of each tool call, on disk beside the session, for the person's viewer.

The model gets a command's output cut at `maxOutput` (10,000 characters); the person can read
all of it (Ctrl+O). Bounded: past `limit` characters the file keeps the head and the tail,
with one line saying how much was left out, so a runaway `yes` cannot fill the disk.
Files live in `<session file without .json>.outputs/<call id>.txt`.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from pathlib import Path

log = logging.getLogger(__name__)

FULL_OUTPUT_LIMIT = 2_000_000  # characters kept per call (head + tail)
LEFT_OUT = "\n[… {count:,} characters not kept here …]\n"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def outputs_dir(session_file: Path) -> Path:
    """The folder of a session's full outputs."""
    return session_file.with_suffix(".outputs")


def output_file(session_file: Path, call_id: str) -> Path:
    """Where one call's full output is kept (a call id is made safe as a file name)."""
    return outputs_dir(session_file) / f"{_UNSAFE.sub('_', call_id)[:120]}.txt"


class FullOutputWriter:
    """Collects one call's live output: the head goes to the file, the tail waits in memory."""

    def __init__(self, path: Path, *, limit: int = FULL_OUTPUT_LIMIT) -> None:
        self.path = path
        self.head_room = limit // 2
        self.tail_room = limit - self.head_room
        self._tail: deque[str] = deque()
        self._tail_chars = 0
        self._dropped = 0
        self._file = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("w", encoding="utf-8", errors="replace")
        except OSError:
            log.debug("cannot keep the full output in %s", path, exc_info=True)

    def append(self, text: str) -> None:
        if self._file is None or not text:
            return
        if self.head_room > 0:
            head, text = text[: self.head_room], text[self.head_room :]
            self._write(head)
            self.head_room -= len(head)
        if text:
            self._tail.append(text)
            self._tail_chars += len(text)
            while len(self._tail) > 1 and self._tail_chars - len(self._tail[0]) >= self.tail_room:
                self._tail_chars -= len(self._tail[0])
                self._dropped += len(self._tail.popleft())

    def close(self) -> None:
        """Write the tail (and what was left out) and close the file."""
        if self._file is None:
            return
        tail = "".join(self._tail)
        if len(tail) > self.tail_room:
            self._dropped += len(tail) - self.tail_room
            tail = tail[-self.tail_room :]
        if self._dropped:
            self._write(LEFT_OUT.format(count=self._dropped))
        self._write(tail)
        try:
            self._file.close()
        except OSError:
            log.debug("cannot close %s", self.path, exc_info=True)
        self._file = None

    def _write(self, text: str) -> None:
        if self._file is None:
            return
        try:
            self._file.write(text)
        except OSError:  # a full disk: the viewer falls back to the row's output
            log.debug("cannot write %s", self.path, exc_info=True)
            self._file = None


def read_full_output(session_file: Path, call_id: str) -> str | None:
    """A call's kept output, or None when none was kept (an old session, a short output)."""
    try:
        return output_file(session_file, call_id).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
