"""Writing a rename's files: each the file the plan read, all of them or none (SPEC §4 `rename`).

Every file goes through the guarded write (`support/guarded_write.py`), as `edit_file` does:
its real folder opened without following a link and checked to be the same folder, the name
opened with `O_NOFOLLOW` in it (a link put there is refused, never followed), a regular file,
the inode the plan read when it has other hard links, the content the plan read (SHA-256),
all under an exclusive `flock` on the folder.

All or nothing, in two steps:
- before anything is written, every file is checked: when any is no longer the file read
  (swapped for a link out of the project, replaced, changed, deleted), nothing is written
  and `FilesRefused` lists each such file in one line;
- then each file is written; when one is refused or fails meanwhile, or a file read back is
  not what was written or lacks the new name, the files already written get their old text
  back through the same guarded write: one that was swapped since it was written is left as
  it is (never written through) and `RenameFailed.not_restored` names it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from pathlib import Path

from mm_tui.lsp.formatting import display_path
from mm_tui.lsp.workspace_edit import FileChange
from mm_tui.support.guarded_write import (
    FileSeen,
    NotWritten,
    check_seen,
    see,
    write_seen,
    written_as,
)

log = logging.getLogger(__name__)

WHY_LINKED = "it has other hard links now, which the rename would change too"


class FilesRefused(Exception):
    """Files no longer the ones the rename read; nothing was written. `lines`: one per file
    (`path: why`); `total`: how many files the rename would have written."""

    def __init__(self, lines: list[str], total: int) -> None:
        super().__init__("; ".join(lines))
        self.lines = lines
        self.total = total


class RenameFailed(Exception):
    """A write failed or a written file is not what the rename meant; `str()` says which and
    why. `not_restored`: the files left as they are (`path: why`), since they were no longer
    the files written; every other written file got its old text back."""

    def __init__(self, reason: str, not_restored: list[str] | None = None) -> None:
        super().__init__(reason)
        self.not_restored = not_restored or []


def write_changes(
    changes: list[FileChange],
    new_name: str = "",
    before_write: Callable[[Path], None] | None = None,
    root: Path | None = None,
) -> None:
    """Write each changed file as the module says; FilesRefused (nothing written),
    RenameFailed or the OSError (the files written restored) when the rename cannot be whole.
    `before_write(path)` is told each file just before it is written (`/undo` keeps it)."""
    pending = [change for change in changes if change.new_text != change.old_text]
    plans = [(change, _seen(change)) for change in pending]
    refused = [line for change, seen in plans if (line := _refusal(change, seen, root))]
    if refused:
        raise FilesRefused(refused, len(pending))
    written: list[tuple[FileChange, FileSeen]] = []
    try:
        for change, seen in plans:
            if before_write is not None:
                before_write(change.path)
            data = _bytes(change.new_text)
            try:
                write_seen(seen, data)
            except NotWritten as refusal:
                raise RenameFailed(f"{_shown(change, root)} not written: {refusal.why}") from None
            written.append((change, written_as(seen, data)))
        for change, _ in written:
            _check_written(change, new_name, root)
    except (OSError, RenameFailed) as failure:
        not_restored = _restore(written, root)
        if not_restored:
            raise RenameFailed(_reason(failure), not_restored) from failure
        raise


def _reason(failure: OSError | RenameFailed) -> str:
    if isinstance(failure, RenameFailed):
        return str(failure)
    return f"writing {failure.filename}: {failure.strerror or failure}"


def _seen(change: FileChange) -> FileSeen:
    """The plan's record of the file; a change made without one (a test) is taken as read
    now, with the text the change was computed on."""
    return change.seen or see(change.path, _bytes(change.old_text))


def _refusal(change: FileChange, seen: FileSeen, root: Path | None) -> str:
    """`path: why` when the file is no longer the one read; "" when it may be written."""
    try:
        info = check_seen(seen)
    except NotWritten as refusal:
        return f"{_shown(change, root)}: {refusal.why}"
    except OSError as error:
        return f"{_shown(change, root)}: {error.strerror or error}"
    if info is not None and info.st_nlink > 1:
        return f"{_shown(change, root)}: {WHY_LINKED}"
    return ""


def _check_written(change: FileChange, new_name: str, root: Path | None) -> None:
    on_disk = change.path.read_bytes().decode("utf-8", "surrogateescape")
    shown = _shown(change, root)
    if on_disk != change.new_text:
        raise RenameFailed(f"{shown} changed on disk while it was written")
    if not new_name:
        return
    name = re.compile(rf"(?<![\w$]){re.escape(new_name)}(?![\w$])")
    for start, end in change.placed or ((0, len(on_disk)),):
        # The lines the edit wrote: a diff-style edit (jedi's) may write a part of the name,
        # so its lines are searched, not its own text; a whole-file edit, the whole file.
        first = on_disk.rfind("\n", 0, start) + 1
        last = on_disk.find("\n", end)
        if not name.search(on_disk, first, len(on_disk) if last < 0 else last):
            line = on_disk.count("\n", 0, start) + 1
            raise RenameFailed(
                f"{shown}:{line} does not contain {new_name} where the server's edit put it"
            )


def _restore(written: list[tuple[FileChange, FileSeen]], root: Path | None) -> list[str]:
    """Each written file back to its old text, only while it is still the file written;
    the lines of those left as they are."""
    left: list[str] = []
    for change, after in written:
        try:
            write_seen(after, _bytes(change.old_text))
        except NotWritten as refusal:
            left.append(f"{_shown(change, root)}: {refusal.why}")
        except OSError as error:
            log.warning("could not restore %s after a failed rename", change.path, exc_info=True)
            left.append(f"{_shown(change, root)}: {error.strerror or error}")
    return left


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


def _shown(change: FileChange, root: Path | None) -> str:
    return change.path.name if root is None else display_path(change.path, root)
