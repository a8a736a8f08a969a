"""A rename's WorkspaceEdit, checked and applied to the files on disk (SPEC §4 `rename`).

The answer may carry `changes` or `documentChanges`; when a server sends both, only
`documentChanges` is applied (the protocol says it wins), never both. Every file is checked
to lie inside the project root and every edit resolved before anything is written; then each
file's edits are applied from its end to its start, so earlier positions stay valid, with the
server's columns converted from its position encoding.
"""

from __future__ import annotations

import difflib
import logging
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.lsp.documents import NotAFile, path_of_uri
from mm_tui.lsp.encoding_check import Span
from mm_tui.lsp.formatting import display_path
from mm_tui.lsp.text import line_starts, offset_of, split_lines
from mm_tui.support.guarded_write import FileSeen, see
from mm_tui.support.terminal_text import quoted

log = logging.getLogger(__name__)


class EditRefused(Exception):
    """The edit cannot be applied as a whole; `str()` is the reason, nothing was written."""


@dataclass(frozen=True)
class FileChange:
    """One file's new text, computed but not yet written."""

    path: Path
    old_text: str
    new_text: str
    edit_count: int
    #: Where each edit's new text lies in `new_text` (start, end): the lines the new name
    #: must stand on once the file is written (none known: anywhere in the file).
    placed: tuple[tuple[int, int], ...] = ()
    #: The file as read for the plan (folder, inode, hash): what the write checks it still is.
    seen: FileSeen | None = None


def edits_by_file(answer: Any) -> dict[Path, list[dict[str, Any]]]:
    """The text edits of a WorkspaceEdit per real path, from exactly one of its two forms."""
    if not isinstance(answer, dict):
        return {}
    by_file: dict[Path, list[dict[str, Any]]] = {}
    document_changes = answer.get("documentChanges")
    if isinstance(document_changes, list):
        for change in document_changes:
            if not isinstance(change, dict):
                continue
            if (
                "kind" in change
            ):  # create, rename or delete a file: not what a rename of a name does
                raise EditRefused(f"the server wants to {change['kind']} a file")
            document = change.get("textDocument")
            uri = document.get("uri") if isinstance(document, dict) else None
            if isinstance(uri, str):
                by_file.setdefault(_file_of(uri), []).extend(_edit_list(change.get("edits")))
        return by_file
    changes = answer.get("changes")
    if isinstance(changes, dict):
        for uri, edits in changes.items():
            by_file.setdefault(_file_of(str(uri)), []).extend(_edit_list(edits))
    return by_file


def _file_of(uri: str) -> Path:
    """The real path of an edit's `file://` URI; any other scheme (`untitled:`, `https:`)
    names no file on disk: a relative path read from it would land in mm-tui's folder."""
    try:
        return path_of_uri(uri)
    except NotAFile:
        shown = quoted(uri)
        raise EditRefused(
            f"the server wanted to edit {shown}, which is not a file on disk"
        ) from None


def _edit_list(edits: Any) -> list[dict[str, Any]]:
    return [edit for edit in edits if isinstance(edit, dict)] if isinstance(edits, list) else []


def _wire_position(value: Any) -> tuple[int, int]:
    """A range end's line and column, which must be whole numbers from 0: a negative line
    would count from the end of the file (Python's indexing) and edit the wrong place."""
    line = value.get("line") if isinstance(value, dict) else None
    character = value.get("character") if isinstance(value, dict) else None
    for number in (line, character):
        if not isinstance(number, int) or isinstance(number, bool) or number < 0:
            raise EditRefused("the server sent an edit with an invalid range")
    assert isinstance(line, int) and isinstance(character, int)
    return line, character


def _span(edit: dict[str, Any], text: str, starts: list[int], encoding: str) -> tuple[int, int]:
    where = edit.get("range")
    start = where.get("start") if isinstance(where, dict) else None
    end = where.get("end") if isinstance(where, dict) else None
    if not (isinstance(start, dict) and isinstance(end, dict)):
        raise EditRefused("the server sent an edit without a range")
    begin = offset_of(text, starts, *_wire_position(start), encoding)
    finish = offset_of(text, starts, *_wire_position(end), encoding)
    if finish < begin:
        raise EditRefused("the server sent an edit whose range ends before it starts")
    return begin, finish


def apply_text_edits(text: str, edits: list[dict[str, Any]], encoding: str) -> str:
    """`text` with `edits` applied as if from its end to its start (each range read in the
    original text); an edit listed twice counts once, overlapping edits are refused. Built
    from pieces in one pass: a rename of 100,000 places must not copy the file each time."""
    return placed_text_edits(text, edits, encoding)[0]


def placed_text_edits(
    text: str, edits: list[dict[str, Any]], encoding: str
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """`apply_text_edits`, and where each edit's new text lies in the result."""
    starts = line_starts(text)
    spans = sorted(
        {(*_span(edit, text, starts, encoding), str(edit.get("newText", ""))) for edit in edits}
    )
    for before, after in zip(spans, spans[1:], strict=False):
        if after[0] < before[1]:
            raise EditRefused("the server sent overlapping edits")
    pieces: list[str] = []
    placed: list[tuple[int, int]] = []
    kept = length = 0
    for begin, finish, new in spans:
        length += begin - kept
        placed.append((length, length + len(new)))
        length += len(new)
        pieces += (text[kept:begin], new)
        kept = finish
    pieces.append(text[kept:])
    return "".join(pieces), tuple(placed)


def plan_changes(
    answer: Any, root: Path, encoding: str, names: tuple[str, str] | None = None
) -> list[FileChange]:
    """Every file's new text, or EditRefused; reads the files, writes nothing.

    With `names` (old, new), every edit that writes exactly the new name must replace exactly
    the old one: an edit that lands beside it (a server counting columns otherwise than it
    said) would write broken code, so the whole rename is refused instead.
    """
    files = read_targets(edits_by_file(answer), root)
    changes: list[FileChange] = []
    for path, (old_text, edits) in files.items():
        if names is not None:
            _check_names(old_text, edits, encoding, names, display_path(path, root))
        new_text, placed = placed_text_edits(old_text, edits, encoding)
        seen = see(path, old_text.encode("utf-8", "surrogateescape"))
        changes.append(FileChange(path, old_text, new_text, len(edits), placed, seen))
    return changes


def read_targets(
    by_file: dict[Path, list[dict[str, Any]]], root: Path
) -> dict[Path, tuple[str, list[dict[str, Any]]]]:
    """Each file to edit with its text now, in path order; EditRefused when one lies outside
    the project, cannot be read, or is read-only (refused as edit_file refuses it, before
    anything is written: no half-done rename).

    Outside also means: a file that became a link since its path was resolved (resolutions
    are remembered for the session), or one with other hard links (written in place, its
    other names — which may lie outside the project — would change too)."""
    real_root = Path(os.path.realpath(root))
    for path in by_file:
        if not path.is_relative_to(real_root):
            raise EditRefused(f"the server wanted to edit {path}, outside the project root")
    files: dict[Path, tuple[str, list[dict[str, Any]]]] = {}
    for path, edits in sorted(by_file.items()):
        if not edits:
            continue
        shown = display_path(path, root)
        moved = _link_now(path)
        if moved is not None:
            raise EditRefused(f"{shown} is now a link to {moved}")
        try:
            old_text = path.read_bytes().decode("utf-8", "surrogateescape")
            info = path.stat()
        except OSError as error:
            raise EditRefused(f"cannot read {shown}: {error.strerror}") from None
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o222 == 0 or not os.access(path, os.W_OK):
            raise EditRefused(f"{shown} is read-only (mode {mode:o})")
        if info.st_nlink > 1:
            raise EditRefused(
                f"{shown} has {info.st_nlink - 1} other hard link(s), which a rename would "
                "change too"
            )
        files[path] = (old_text, edits)
    return files


def name_spans(files: dict[Path, tuple[str, list[dict[str, Any]]]], new_name: str) -> list[Span]:
    """The one-line ranges the server means to replace by `new_name`, with their lines."""
    spans: list[Span] = []
    for text, edits in files.values():
        lines = split_lines(text)
        for edit in edits:
            where = edit.get("range")
            start = where.get("start") if isinstance(where, dict) else None
            end = where.get("end") if isinstance(where, dict) else None
            if edit.get("newText") != new_name or not (
                isinstance(start, dict) and isinstance(end, dict)
            ):
                continue
            line, first, last = start.get("line"), start.get("character"), end.get("character")
            if (
                isinstance(line, int)
                and line == end.get("line")
                and 0 <= line < len(lines)
                and isinstance(first, int)
                and isinstance(last, int)
            ):
                spans.append((lines[line], first, last))
    return spans


def _check_names(
    text: str, edits: list[dict[str, Any]], encoding: str, names: tuple[str, str], shown: str
) -> None:
    old_name, new_name = names
    starts = line_starts(text)
    for edit in edits:
        if edit.get("newText") != new_name:
            continue  # a whole-file or a diff-style edit (jedi): checked on the result
        begin, finish = _span(edit, text, starts, encoding)
        if text[begin:finish] != old_name:
            line = text.count("\n", 0, begin) + 1
            raise EditRefused(
                f"the server's edit at {shown}:{line} replaces "
                f"{text[begin:finish]!r}, not {old_name!r}"
            )


def _link_now(path: Path) -> str | None:
    """Where `path` (a real path when resolved) leads now, when it became a link since."""
    now = os.path.realpath(path)
    return None if now == os.fspath(path) else now


def changes_diff(changes: list[FileChange], root: Path) -> str:
    """A unified diff of every change, paths as the model sees them. Like the core's diffs
    (agent/tools/diffs.py), only `\n` ends a line and each line is kept as the file has it
    (`\r` and all), so ACP rebuilds the exact texts from it; a last line without `\n` is
    marked as `diff -u` marks it."""
    chunks: list[str] = []
    for change in changes:
        shown = display_path(change.path, root)
        chunks.extend(
            difflib.unified_diff(
                _lines_with_ends(change.old_text),
                _lines_with_ends(change.new_text),
                fromfile=f"a/{shown}",
                tofile=f"b/{shown}",
            )
        )
    return "".join(line if line.endswith("\n") else f"{line}\n{_NO_NEWLINE}\n" for line in chunks)


_NO_NEWLINE = "\\ No newline at end of file"


def _lines_with_ends(text: str) -> list[str]:
    """The lines of `text`, each with its `\n` (the last one may have none)."""
    lines = [f"{line}\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
