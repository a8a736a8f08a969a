"""The file tools over an editor's buffers (ACP `fs/*`), with the checks of the disk route.

When an editor holds the project's files (`ToolContext.files`), a plan is computed on the
editor's text of the file, saved or not, so the question's diff is the change to the text
the person sees, and the write hands the editor exactly the planned text. The disk still
says what the file is (missing, a FIFO, too large, binary): the editor only supplies text.

Before a write is handed to the editor, as `guarded_write` does before its own write:
- the path's real location (links resolved) is inside the project, else the call is refused
  before any question (`check_target`): the editor writes only its project's files;
- the editor is given the real path, never a link, and at write time that path must still
  be the file asked about (no folder on the way became a link or was replaced, still a
  regular file and not a hard link swapped in; a new file still absent);
- the editor's text must still be the one the plan was computed on: an edit is applied
  again to the new text (`reapply`), anything else is refused, as for another writer.
docs/decisions/0010-acp-client-fs-and-terminal.md says why, and what the editor then owns.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from mm_tui.agent.tools.base import EditorFiles
from mm_tui.agent.tools.file_text import encode_file_text, looks_binary
from mm_tui.agent.tools.paths import PathProblem
from mm_tui.agent.tools.safe_files import kind_of, read_regular
from mm_tui.support.guarded_write import (
    WHY_CREATED,
    WHY_DELETED,
    WHY_FOLDER,
    WHY_KIND,
    WHY_LINK,
    WHY_OTHER_INODE,
    FileSeen,
    NotWritten,
    rebased,
)
from mm_tui.support.terminal_text import quoted

OUTSIDE_THE_PROJECT = (
    "[error: {path} leads outside the project (to {real}); the editor writes only its "
    "project's files, so nothing was written]"
)
EDITOR_FAILED = "the editor could not {what} it ({reason})"

Writer = Callable[[FileSeen, bytes, Callable[[bytes], bytes | str] | None], int]


def real_path(path: Path) -> Path:
    return Path(os.path.realpath(path))


def check_target(path: Path, files: EditorFiles | None) -> None:
    """PathProblem (the tool's one line, no question) for a write the editor would not own."""
    if files is not None and not files.holds(real_path(path)):
        shown, real = quoted(str(path)), quoted(str(real_path(path)))
        raise PathProblem(OUTSIDE_THE_PROJECT.format(path=shown, real=real))


def read_planned(path: Path, files: EditorFiles | None) -> bytes:
    """The file's content as a plan is computed on it: the disk's, or the editor's text for a
    text file it holds. The disk is read first: it says whether the file is there at all."""
    data = read_regular(path)
    real = real_path(path)
    if files is None or looks_binary(data) or not files.holds(real):
        return data
    return encode_file_text(editor_text(files, real))


def editor_text(files: EditorFiles, real: Path) -> str:
    """The editor's text of the file; an OSError saying the editor could not read it."""
    try:
        return files.read_text(real)
    except OSError as error:
        reason = EDITOR_FAILED.format(what="read", reason=error.strerror or error)
        raise OSError(error.errno, reason) from error


def writer(files: EditorFiles) -> Writer:
    """`guarded_write.write_seen`'s counterpart: check, then hand the text to the editor."""

    def write(
        seen: FileSeen, data: bytes, reapply: Callable[[bytes], bytes | str] | None = None
    ) -> int:
        _check_same_file(seen)
        if seen.file is not None:
            current = encode_file_text(editor_text(files, seen.real))
            data = rebased(seen, current, data, reapply)
        else:
            seen.real.parent.mkdir(parents=True, exist_ok=True)  # inside the project
            if os.path.realpath(seen.real.parent) != str(seen.real.parent):
                raise NotWritten(WHY_FOLDER)  # a folder on the way became a link meanwhile
        try:
            files.write_text(seen.real, data.decode("utf-8", errors="replace"))
        except OSError as error:
            reason = EDITOR_FAILED.format(what="write", reason=error.strerror or error)
            raise OSError(error.errno, reason) from error
        return 0

    return write


def _check_same_file(seen: FileSeen) -> None:
    """NotWritten when the real path is no longer the file the question was about."""
    if os.path.realpath(seen.real.parent) != str(seen.real.parent):
        raise NotWritten(WHY_FOLDER)
    if seen.folder is not None:
        try:
            info = os.stat(seen.real.parent)
        except OSError as error:
            raise NotWritten(WHY_FOLDER) from error
        if (info.st_dev, info.st_ino) != seen.folder:
            raise NotWritten(WHY_FOLDER)
    try:
        info = os.lstat(seen.real)
    except FileNotFoundError:
        if seen.file is not None:
            raise NotWritten(WHY_DELETED) from None
        return
    if stat.S_ISLNK(info.st_mode):
        raise NotWritten(WHY_LINK)
    if not stat.S_ISREG(info.st_mode):
        raise NotWritten(WHY_KIND.format(kind=kind_of(info.st_mode)))
    if seen.file is None:
        raise NotWritten(WHY_CREATED)
    if info.st_nlink > 1 and (info.st_dev, info.st_ino) != seen.file:  # a hard link, swapped in
        raise NotWritten(WHY_OTHER_INODE)
