"""Writing a file so that a reader never sees half of it (SPEC §4: writes are atomic).

The bytes go to a temporary file in the same directory, which is then renamed over the
target: a rename within one file system is atomic. The file's permission bits are kept; a new
file gets the usual `0o666` minus the umask. A symbolic link is followed so the link stays a
link and its target changes. By default no fsync: for the file tools atomicity against a crash
of mm-tui is the goal, not against a power cut, and an fsync per edit would cost more than the
edit. `durable=True` (sessions: the conversation must survive a power cut too) flushes the
file's bytes before the rename and the directory's entry after it. `exclusive=True` (exports)
never replaces anything: the whole file appears under its name by a hard link, which fails when
the name exists, even as a dangling symbolic link (a planted link cannot redirect the write).
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)


def write_atomically(
    path: Path,
    data: bytes,
    *,
    durable: bool = False,
    new_file_mode: int = 0o666,
    exclusive: bool = False,
) -> int:
    """Replace (or create) `path` with `data`, creating missing parent directories.

    An existing file keeps its owner, group, mode and extended attributes. A file with other
    hard links is written in place (so every name sees the change, not only this one); the
    number of those other links is returned (0: replaced by a rename, or new).

    With `durable`, the data and the rename are on disk when this returns (fsync of the file,
    then of its directory). A new file gets `new_file_mode` minus the umask (sessions: 0o600,
    a conversation is private); an existing file keeps its own mode.

    With `exclusive`, a `path` that exists (any kind of entry) raises FileExistsError and is
    left alone.

    Raises OSError on failure, leaving the original file untouched and no temporary behind.
    """
    if exclusive:
        target = Path(os.path.realpath(path.parent)) / path.name
    else:
        target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        info: os.stat_result | None = None if exclusive else os.stat(target)
    except FileNotFoundError:
        info = None
    kept_mode = stat.S_IMODE(info.st_mode) if info is not None else None
    # A read-only file says "do not change me", to root too (a rename would replace it).
    if kept_mode is not None and (kept_mode & 0o222 == 0 or not os.access(target, os.W_OK)):
        raise PermissionError(errno.EACCES, f"the file is read-only (mode {kept_mode:o})")
    if info is not None and info.st_nlink > 1 and stat.S_ISREG(info.st_mode):
        _write_in_place(target, data, durable=durable)
        return info.st_nlink - 1
    temporary = target.parent / f".{target.name}.{os.urandom(4).hex()}.mm-tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, new_file_mode)
    try:
        try:
            if info is not None and kept_mode is not None:
                _keep_owner_and_attributes(descriptor, target, info)
                os.fchmod(descriptor, kept_mode)
            _write_all(descriptor, data, durable=durable)
        finally:
            os.close(descriptor)
        if exclusive:
            link_exclusively(temporary, target)
        else:
            os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    if durable:
        sync_directory(target.parent)
    return 0


def _keep_owner_and_attributes(descriptor: int, target: Path, info: os.stat_result) -> None:
    """Give the new file the old one's owner, group and extended attributes, where allowed
    (a file owned by someone else keeps its owner only when mm-tui runs as root)."""
    if (info.st_uid, info.st_gid) != (os.getuid(), os.getgid()):
        try:
            os.fchown(descriptor, info.st_uid, info.st_gid)
        except OSError:
            log.debug("cannot keep the owner of %s", target, exc_info=True)
    try:
        names = os.listxattr(target)
    except OSError:
        log.debug("cannot list the extended attributes of %s", target, exc_info=True)
        return
    for name in names:
        try:
            os.setxattr(descriptor, name, os.getxattr(target, name))
        except OSError:
            log.debug("cannot keep the attribute %s of %s", name, target, exc_info=True)


#: For writers that open the folder themselves (agent/tools/guarded_write.py).
keep_owner_and_attributes = _keep_owner_and_attributes


def _write_in_place(target: Path, data: bytes, *, durable: bool) -> None:
    """Overwrite a hard-linked file's content where it is (not atomic: the price of keeping
    every link to it)."""
    descriptor = os.open(target, os.O_WRONLY | os.O_TRUNC)
    try:
        _write_all(descriptor, data, durable=durable)
    finally:
        os.close(descriptor)


def _write_all(descriptor: int, data: bytes, *, durable: bool) -> None:
    """Write every byte (`os.write` may write part), then fsync when asked."""
    view = memoryview(data)
    while view:
        written = os.write(descriptor, view)
        view = view[written:]
    if durable:
        os.fsync(descriptor)


def link_exclusively(temporary: Path, target: Path) -> None:
    """Give `temporary` the name `target` unless that name exists; `temporary` is gone after.

    A file system without hard links (FAT, some network mounts) gets the name reserved by an
    exclusive create instead, then the rename: still never a replacement of someone's file.
    """
    try:
        os.link(temporary, target, follow_symlinks=False)
    except FileExistsError:
        raise
    except OSError as error:
        if error.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
            raise
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        os.close(os.open(target, flags, 0o600))
        os.replace(temporary, target)
        return
    temporary.unlink()


def sync_directory(directory: Path) -> None:
    """Flush a directory's entries (a rename, a new file) to disk; POSIX only, a no-op where
    a directory cannot be opened (Windows)."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
