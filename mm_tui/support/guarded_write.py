"""Writing exactly the file a question showed, and only over the content it was computed on.

Two things can change a file between the question (or the read) and the write:
- something swaps the name: `notes.txt` becomes a symbolic link to a file outside the
  project, a FIFO, a directory, or a folder on the way becomes a link;
- another writer (a second mm-tui) changes the content.

`see` records, when the plan is built, the file's real path (links resolved then, so a link
that was there when the person was asked is followed as it was shown), the identity of its
folder and of the file (device, inode) and a hash of the content read. `write_seen` then,
holding an exclusive `flock` on the folder (every mm-tui writing in that folder waits its
turn): opens the folder and checks it is the same folder; opens the name with `O_NOFOLLOW`
relative to that folder (a link put there meanwhile is refused, never followed); reads it and
compares the hash. Content that moved on is refused, or, for an edit, the edit is applied
again to the content on disk (`reapply`) when it still applies. The new content goes to a
temporary file in the same folder, renamed over the name (mode kept).

Hard links: a name can be a hard link to a file outside the project, and nothing in a path
tells. A file with other links is written in place (so every name sees the change, as
before) only when it is the very inode the question showed; a name that became another
hard-linked inode while the person was asked is refused.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from mm_tui.support.atomic_write import keep_owner_and_attributes
from mm_tui.support.regular_files import MAX_EDIT_BYTES, TEMPORARY_SUFFIX, kind_of

log = logging.getLogger(__name__)
_T = TypeVar("_T")

NOT_WRITTEN = "[error: {path} not written: {why}; nothing was written]"
WHY_LINK = "it became a symbolic link after the question was asked"
WHY_FOLDER = "its folder was replaced (or became a link) after the question was asked"
WHY_KIND = "it became {kind} after the question was asked"
WHY_CREATED = "a file of that name appeared after the question was asked"
WHY_DELETED = "it was deleted after the question was asked"
WHY_CHANGED = "its content changed after it was read (another program wrote it)"
NO_LONGER_APPLIES = "its content changed after it was read and the edits no longer apply to it"
WHY_OTHER_INODE = "it was replaced by a file with other hard links after the question was asked"


class NotWritten(Exception):
    """The write was refused; `why` says why in words (see NOT_WRITTEN)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


@dataclass(frozen=True)
class FileSeen:
    """What a plan was computed on: where the file really is, and what it held."""

    real: Path
    folder: tuple[int, int] | None
    file: tuple[int, int] | None
    digest: str


def digest_of(data: bytes | None) -> str:
    return "" if data is None else hashlib.sha256(data).hexdigest()


def see(path: Path, data: bytes | None) -> FileSeen:
    """Record `path` as read now (`data`: its content, None when there is no file)."""
    real = Path(os.path.realpath(path))
    try:
        info = os.stat(real.parent)
        folder: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        folder = None
    file: tuple[int, int] | None = None
    if data is not None:
        try:
            info = os.lstat(real)
            file = (info.st_dev, info.st_ino)
        except OSError:
            log.debug("cannot stat %s", real, exc_info=True)
    return FileSeen(real, folder, file, digest_of(data))


def shown_plan(memo: dict[str, Any], name: str, args: object) -> Any:
    """The plan a file tool kept for this call (what the question showed, the seen file in
    it; a file tool's memo is `(args, path, stamp, plan)`), None when there is none: the run
    writes what was approved or nothing, never a plan made again after the answer."""
    cached = memo.get(name)
    if isinstance(cached, tuple) and len(cached) == 4 and cached[0] == args:
        return cached[3]
    return None


def write_seen(
    seen: FileSeen,
    data: bytes,
    reapply: Callable[[bytes], bytes | str] | None = None,
) -> int:
    """Write `data` where `seen` says, under the folder's lock; the number of other hard
    links written through (0 mostly). NotWritten when the file is no longer what was seen;
    `reapply(current)` gives the data again for content that moved on (a str: refused, why)."""
    if seen.folder is None:
        seen.real.parent.mkdir(parents=True, exist_ok=True)
    return _in_folder(seen, lambda folder: _write_locked(folder, seen, data, reapply))


def check_seen(seen: FileSeen) -> os.stat_result | None:
    """`write_seen`'s checks without the write: NotWritten when the file is no longer what was
    seen (a link, another kind, another hard-linked inode, appeared, vanished, other
    content); else its stat now (None: still no file). Lets a writer of several files refuse
    them all before writing any."""
    if seen.folder is None:  # its folder did not exist: it must not exist now either
        if os.path.lexists(seen.real.parent):
            raise NotWritten(WHY_CREATED)
        return None
    return _in_folder(seen, lambda folder: _same_content(folder, seen))


def written_as(seen: FileSeen, data: bytes) -> FileSeen:
    """What `write_seen(seen, data)` just left: the record to write it back by (a rollback),
    which refuses, as any guarded write, a file swapped since."""
    try:
        info = os.stat(seen.real.parent)
        folder = (info.st_dev, info.st_ino)
        info = os.lstat(seen.real)
        file: tuple[int, int] | None = (info.st_dev, info.st_ino)
    except OSError:
        log.debug("cannot stat %s after writing it", seen.real, exc_info=True)
        return FileSeen(seen.real, seen.folder, seen.file, digest_of(data))
    return FileSeen(seen.real, folder, file, digest_of(data))


def _in_folder(seen: FileSeen, action: Callable[[int], _T]) -> _T:
    """`action(folder)` with the file's real folder open (no link followed, the same folder
    as seen) and locked against every other mm-tui writing in it."""
    parent = seen.real.parent
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC | os.O_NOFOLLOW
    try:
        folder = os.open(parent, flags)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            raise NotWritten(WHY_FOLDER) from error
        raise
    try:
        info = os.fstat(folder)
        if seen.folder is not None and (info.st_dev, info.st_ino) != seen.folder:
            raise NotWritten(WHY_FOLDER)
        if os.path.realpath(parent) != str(parent):
            raise NotWritten(WHY_FOLDER)
        fcntl.flock(folder, fcntl.LOCK_EX)
        try:
            return action(folder)
        finally:
            fcntl.flock(folder, fcntl.LOCK_UN)
    finally:
        os.close(folder)


def _read_name(folder: int, name: str) -> tuple[bytes, os.stat_result] | None:
    """The name's content and stat, opened without following a link; None when missing."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise NotWritten(WHY_LINK) from error
        if error.errno == errno.ENXIO:  # a socket
            raise NotWritten(WHY_KIND.format(kind="a socket")) from error
        if error.errno == errno.EISDIR:
            raise NotWritten(WHY_KIND.format(kind="a directory")) from error
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotWritten(WHY_KIND.format(kind=kind_of(info.st_mode)))
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_EDIT_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks), info
    finally:
        os.close(fd)


def _still_seen(folder: int, seen: FileSeen) -> tuple[bytes, os.stat_result] | None:
    """The name's content and stat now (None: no file, as seen); NotWritten when it is no
    longer the file seen. Its content is the caller's to compare (an edit may apply again)."""
    found = _read_name(folder, seen.real.name)
    if found is None:
        if seen.file is not None:
            raise NotWritten(WHY_DELETED)
        return None
    if seen.file is None:
        raise NotWritten(WHY_CREATED)
    info = found[1]
    if info.st_nlink > 1 and (info.st_dev, info.st_ino) != seen.file:
        raise NotWritten(WHY_OTHER_INODE)
    return found


def _same_content(folder: int, seen: FileSeen) -> os.stat_result | None:
    found = _still_seen(folder, seen)
    if found is not None and digest_of(found[0]) != seen.digest:
        raise NotWritten(WHY_CHANGED)
    return None if found is None else found[1]


def rebased(
    seen: FileSeen,
    current: bytes,
    data: bytes,
    reapply: Callable[[bytes], bytes | str] | None,
) -> bytes:
    """What to write over `current`: `data` when it is still the content the plan was made
    on, else the plan made again on it (`reapply`), or NotWritten saying why it cannot be."""
    if digest_of(current) == seen.digest:
        return data
    if reapply is None:
        raise NotWritten(WHY_CHANGED)
    again = reapply(current)
    if isinstance(again, str):
        raise NotWritten(again)
    return again


def _write_locked(
    folder: int,
    seen: FileSeen,
    data: bytes,
    reapply: Callable[[bytes], bytes | str] | None,
) -> int:
    name = seen.real.name
    found = _still_seen(folder, seen)
    if found is not None:
        current, info = found
        data = rebased(seen, current, data, reapply)
        if info.st_nlink > 1:
            flags = os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(name, flags, dir_fd=folder)
            try:
                _write_all(fd, data)
            finally:
                os.close(fd)
            return info.st_nlink - 1
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o222 == 0 or not os.access(name, os.W_OK, dir_fd=folder):
            raise PermissionError(errno.EACCES, f"the file is read-only (mode {mode:o})")
    temporary = f".{name}.{os.urandom(4).hex()}{TEMPORARY_SUFFIX}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temporary, flags, 0o666, dir_fd=folder)
    try:
        try:
            if found is not None:
                keep_owner_and_attributes(fd, seen.real, found[1])
                os.fchmod(fd, stat.S_IMODE(found[1].st_mode))
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            log.debug("cannot remove %s", temporary, exc_info=True)
        raise
    return 0


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
