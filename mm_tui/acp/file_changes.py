"""File changes as ACP diff content: the old and the new text of each file an edit touches.

The core describes an edit as a unified diff (`--- a/x`, `+++ b/x`, hunks). ACP wants whole
texts, so the hunks are applied to the file as it is on disk: forwards before the edit (the
permission question shows what would change), backwards after it (a rename's files are known
only from its diff). A diff that does not fit the file gives no text, never a wrong one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mm_tui.agent.tools.diffs import split_lines

log = logging.getLogger(__name__)

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"
LARGEST_FILE = 2_000_000  # characters; a bigger file travels as text, not as a diff


@dataclass
class Hunk:
    old_start: int  # 1-based; 0 when the old side is empty
    new_start: int
    lines: list[tuple[str, str]] = field(default_factory=list)  # (sign, text with its "\n")


@dataclass
class FilePatch:
    """One file of a unified diff; `path` as written after `+++ ` without its `b/`."""

    path: str
    created: bool
    hunks: list[Hunk] = field(default_factory=list)


@dataclass(frozen=True)
class FileChange:
    """What ACP shows: `old` is None for a file that did not exist."""

    path: Path
    old: str | None
    new: str


def parse_unified(diff: str) -> list[FilePatch]:
    """The files of a unified diff as the core writes it (tools/diffs.py, and lsp rename's
    workspace_edit.changes_diff): only `\n` ends one of its lines."""
    patches: list[FilePatch] = []
    created = False
    old_left = new_left = 0  # lines the current hunk still holds, from its header
    for line in diff.split("\n"):
        if (old_left or new_left) and line[:1] in (" ", "-", "+"):
            # a hunk's line, even one that reads like a header (`--- x`: a removed `-- x`)
            patches[-1].hunks[-1].lines.append((line[0], line[1:] + "\n"))
            old_left -= line[0] != "+"
            new_left -= line[0] != "-"
        elif line.startswith("--- "):
            created = line[4:].strip() == "/dev/null"
        elif line.startswith("+++ "):
            name = line[4:].strip()
            patches.append(FilePatch(name[2:] if name.startswith("b/") else name, created))
        elif patches and (match := _HUNK.match(line)):
            patches[-1].hunks.append(Hunk(int(match[1]), int(match[3])))
            old_left = 1 if match[2] is None else int(match[2])
            new_left = 1 if match[4] is None else int(match[4])
        elif patches and patches[-1].hunks and patches[-1].hunks[-1].lines and line == _NO_NEWLINE:
            sign, text = patches[-1].hunks[-1].lines[-1]
            patches[-1].hunks[-1].lines[-1] = (sign, text.removesuffix("\n"))
    return patches


def apply(text: str, patch: FilePatch, *, reverse: bool = False) -> str | None:
    """`text` with the patch applied (or undone); None when its lines do not match. Lines end
    at `\n` alone, as in the core's diff, which keeps each line exactly (a CRLF line's `\r`,
    a lone `\r`, a form feed): the texts rebuilt keep the file's line ends, mixed or not."""
    drop, keep = ("+", "-") if reverse else ("-", "+")
    lines = split_lines(text)
    result: list[str] = []
    cursor = 0
    for hunk in patch.hunks:
        start = max((hunk.new_start if reverse else hunk.old_start) - 1, 0)
        if start < cursor or start > len(lines):
            return None
        result.extend(lines[cursor:start])
        cursor = start
        for sign, line in hunk.lines:
            if sign in (" ", drop):
                if cursor >= len(lines) or lines[cursor] != line:
                    return None
                if sign == " ":
                    result.append(lines[cursor])
                cursor += 1
            elif sign == keep:
                result.append(line)
    result.extend(lines[cursor:])
    return "".join(result)


def read_text(path: Path) -> str | None:
    """The file's text, or None when it is missing, unreadable, binary or too big."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if len(data) > LARGEST_FILE or b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def changes_before(
    diff: str, root: Path, read: Callable[[Path], str | None] = read_text
) -> list[FileChange]:
    """What an edit not yet made would change, from its diff and the files as `read` gives
    them (the disk, or the editor's buffers the edit was planned on)."""
    changes: list[FileChange] = []
    for patch in parse_unified(diff):
        path = (root / patch.path).resolve()
        old = None if patch.created else read(path)
        if old is None and not patch.created:
            continue
        new = apply(old or "", patch)
        if new is not None:
            changes.append(FileChange(path, old, new))
    return changes


def changes_after(diff: str, root: Path) -> list[FileChange]:
    """What an edit just made changed, from its diff and the files now on disk."""
    changes: list[FileChange] = []
    for patch in parse_unified(diff):
        path = (root / patch.path).resolve()
        new = read_text(path)
        if new is None:
            continue
        old = None if patch.created else apply(new, patch, reverse=True)
        if old is not None or patch.created:
            changes.append(FileChange(path, old, new))
    return changes


#: Between two hunks of a change rebuilt from its diff alone: the lines the diff left out.
HUNK_GAP = "⋮\n"


def changes_in_diff(diff: str, root: Path) -> list[FileChange]:
    """What a past edit changed, from its diff alone (a replayed session: the files on disk
    are today's): each file's hunks, their old side and their new side, a gap between two."""
    changes: list[FileChange] = []
    for patch in parse_unified(diff):
        old_parts: list[str] = []
        new_parts: list[str] = []
        for hunk in patch.hunks:
            old_parts.append("".join(text for sign, text in hunk.lines if sign in (" ", "-")))
            new_parts.append("".join(text for sign, text in hunk.lines if sign in (" ", "+")))
        old = None if patch.created else HUNK_GAP.join(old_parts)
        changes.append(FileChange((root / patch.path).resolve(), old, HUNK_GAP.join(new_parts)))
    return changes
