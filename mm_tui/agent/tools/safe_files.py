"""Opening a file the tools were asked about, without ever hanging on it.

A path a model names may be a FIFO (a read blocks until someone writes), a socket, a device
(`/dev/tty`, `/dev/zero`) or a huge log. The file tools work on regular files only: the file
is opened non-blocking and checked with `fstat` on the descriptor itself (no race between a
check and the open), and reads are bounded. `stamp` is what a permission question remembers
of a file so a write can tell that the file changed while the person was reading.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path
from typing import BinaryIO

from mm_tui.support.regular_files import MAX_EDIT_BYTES, TEMPORARY_SUFFIX, kind_of

log = logging.getLogger(__name__)

NOT_REGULAR = (
    "[error: {path} is {kind}, not a regular file; the file tools read and write regular "
    "files only]"
)
TOO_LARGE = "[error: {path} is larger than {limit} MiB; edit it with bash (sed, a script)]"
#: Folders never searched for leftovers (large, and never written by the tools).
_SKIPPED_FOLDERS = {".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache"}


class NotRegularFile(OSError):
    """The path is a FIFO, a socket or a device; `kind` says which, in words."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"not a regular file ({kind})")
        self.kind = kind


class FileTooLarge(OSError):
    """The file is past the bound of what the tool reads."""


def open_regular(path: Path) -> BinaryIO:
    """The file open for reading; NotRegularFile at once for anything but a regular file.

    Checked before the open (a socket cannot be opened at all) and again on the descriptor
    (the path may have been swapped in between)."""
    refuse_special_file(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            if stat.S_ISDIR(mode):
                raise IsADirectoryError(21, "Is a directory")
            raise NotRegularFile(kind_of(mode))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, limit: int = MAX_EDIT_BYTES) -> bytes:
    """The whole file (FileNotFoundError if missing); FileTooLarge past `limit` bytes."""
    with open_regular(path) as source:
        data = source.read(limit + 1)
    if len(data) > limit:
        raise FileTooLarge(27, f"larger than {limit >> 20} MiB")
    return data


def stamp(path: Path) -> str:
    """What identifies this version of the file without reading it ("" when missing)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return ""
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"


def refuse_special_file(path: Path) -> None:
    """Refuse to replace a FIFO, socket or device with a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise NotRegularFile(kind_of(mode))


def remove_leftover_temporaries(
    root: Path, *, older_than: float = 60.0, max_folders: int = 5000
) -> list[Path]:
    """Delete `.name.xxxxxxxx.mm-tmp` files a killed write left in the project (bounded walk);
    young ones may belong to another mm-tui writing right now and are kept."""
    removed: list[Path] = []
    now = time.time()
    seen = 0
    for folder, folders, files in os.walk(root):
        seen += 1
        if seen > max_folders:
            break
        folders[:] = [f for f in folders if f not in _SKIPPED_FOLDERS]
        for name in files:
            if not (name.startswith(".") and name.endswith(TEMPORARY_SUFFIX)):
                continue
            candidate = Path(folder) / name
            try:
                if now - candidate.lstat().st_mtime >= older_than:
                    candidate.unlink()
                    removed.append(candidate)
            except OSError:
                log.debug("cannot remove leftover %s", candidate, exc_info=True)
    return removed
