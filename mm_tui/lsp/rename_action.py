"""The `rename` action: the server's edits, checked, written to disk, then told back (SPEC §4).

A rename must never leave broken code behind: the server is asked until its
whole index stands behind the edits (rename_check.py), the columns of its edits are
checked against the name they replace (and the server's real encoding adopted when they
show another), read-only files refuse the whole rename before anything is written, and the
files are read back after writing — any surprise restores every file and says so.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from pathlib import Path

from mm_tui.lsp.actions import ActionContext, first_answer, references, when_ready
from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import ServerConnection, ServerFailure
from mm_tui.lsp.formatting import display_path
from mm_tui.lsp.rename_check import settled_rename
from mm_tui.lsp.rename_write import FilesRefused, RenameFailed, write_changes
from mm_tui.lsp.symbols import Occurrence, clean_symbol
from mm_tui.lsp.text import from_wire_column
from mm_tui.lsp.words import rule_with
from mm_tui.lsp.workspace_edit import (
    EditRefused,
    changes_diff,
    edits_by_file,
    name_spans,
    plan_changes,
    read_targets,
)

log = logging.getLogger(__name__)

RENAMED = "renamed to {new_name}: {edits} edit(s) in {files} file(s)"
RENAME_PREVIEW = "rename to {new_name}: {edits} edit(s) in {files} file(s)"
RENAME_FILE_LINE = "{path}: {edits} edit(s)"
RENAME_REFUSED = "[lsp: rename refused: {reason} — nothing was written]"
RENAME_ROLLED_BACK = "[lsp: rename failed: {reason} — every file was restored]"
#: Then one line per file (`path: why`).
FILES_NO_LONGER_READ = "{count} of {total} file(s) are no longer the files read for the rename"
NOT_RESTORED = (
    "[lsp: rename failed: {reason} — every other file was restored; these were no longer the "
    "files written, so they were left as they are:]"
)
BLIND = (
    "{server} found no source files in the project (its log said so), so its rename would "
    "reach the open files only"
)
NOT_AS_SHOWN = (
    "the server's edits are not the ones shown when the rename was allowed; "
    "call rename again to see them"
)


def needs_new_name(shown: str, symbol: str) -> str:
    """The refusal of a rename without a new name, with the call to make instead."""
    call = (
        f'{{"action": "rename", "path": {json.dumps(shown)}, "symbol": {json.dumps(symbol)}, '
        f'"new_name": "<the new identifier>"}}'
    )
    return f"[lsp: rename needs new_name — call lsp again with {call}; do not use edit_file for a rename]"


def rename(
    context: ActionContext,
    targets: Sequence[Occurrence],
    new_name: str,
    *,
    write: bool,
    before_write: Callable[[Path], None] | None = None,
    shown: str | None = None,
) -> Text | Failed:
    """Ask the server for the rename's edits; with `write`, apply them and resync the files.

    `shown` is the diff the person allowed (what you approve is what runs): the
    server is asked again to write, and its new answer may differ (a server that changed
    its mind, or a hostile one); then nothing is written."""
    connection = context.connection
    if connection.young:
        # A server just started may know only the open files: wait as references would
        # (readiness, then a cross-file answer), so the rename reaches every file.
        references(context, targets)

    def ask(occurrence: Occurrence) -> Text | Failed | None:
        if connection.state.scan_found_nothing:  # its scan is over (when_ready waited)
            return Failed(RENAME_REFUSED.format(reason=BLIND.format(server=connection.name)))
        name = new_name
        served = served_name(context, occurrence)
        if served is not None and served != context.name_at(occurrence):
            asked, raw_new_name = context.asked
            if asked and served.lstrip("$@") != asked.lstrip("$@"):
                return None  # the place is inside another, longer name: not the one asked
            context.served_names[occurrence] = served
            name = clean_symbol(raw_new_name, rule_with(context.rule, served)) or new_name
        return renamed_at(occurrence, name)

    def renamed_at(occurrence: Occurrence, new_name: str) -> Text | Failed | None:
        old_name = context.name_at(occurrence)
        try:
            answer = settled_rename(context, occurrence, new_name)
            edit = answer.edit
            files = read_targets(edits_by_file(edit), context.root)
            if answer.missed or answer.outside:  # incomplete: never written (rename_check)
                raise EditRefused(answer.incomplete_reason(connection.name))
            connection.check_encoding(name_spans(files, new_name), old_name)
            changes = plan_changes(edit, context.root, connection.encoding, (old_name, new_name))
        except EditRefused as refusal:
            return Failed(RENAME_REFUSED.format(reason=refusal))
        if not changes:
            return None
        diff = changes_diff(changes, context.root)
        if write and shown is not None and diff != shown:
            return Failed(RENAME_REFUSED.format(reason=NOT_AS_SHOWN))
        if write:
            try:
                write_changes(changes, new_name, before_write, context.root)
            except FilesRefused as refused:
                reason = FILES_NO_LONGER_READ.format(count=len(refused.lines), total=refused.total)
                return Failed("\n".join([RENAME_REFUSED.format(reason=reason), *refused.lines]))
            except RenameFailed as failure:
                if failure.not_restored:
                    head = NOT_RESTORED.format(reason=failure)
                    return Failed("\n".join([head, *failure.not_restored]))
                return Failed(RENAME_ROLLED_BACK.format(reason=failure))
            except OSError as error:
                reason = f"writing {error.filename}: {error.strerror}"
                return Failed(RENAME_ROLLED_BACK.format(reason=reason))
            resync(connection, [change.path for change in changes])
        template = RENAMED if write else RENAME_PREVIEW
        total = sum(change.edit_count for change in changes)
        lines = [template.format(new_name=new_name, edits=total, files=len(changes))]
        for change in sorted(changes, key=lambda c: display_path(c.path, context.root)):
            lines.append(
                RENAME_FILE_LINE.format(
                    path=display_path(change.path, context.root), edits=change.edit_count
                )
            )
        return Text("\n".join(lines), diff=diff)

    return when_ready(context, lambda: first_answer(context, "rename", targets, ask))


def served_name(context: ActionContext, occurrence: Occurrence) -> str | None:
    """The name at `occurrence` as the server's own range has it: its `prepareRename`
    range, else the `documentHighlight` range around the place; None when it gives none.
    What counts as one name is the server's to say, in any language (words.py)."""
    connection = context.connection
    params = context.text_position(occurrence)
    prepare = connection.capabilities.get("renameProvider")
    try:
        if isinstance(prepare, dict) and prepare.get("prepareProvider"):
            found = connection.request("textDocument/prepareRename", params)
            ranges = [found.get("range", found)] if isinstance(found, dict) else []
        elif connection.offers("documentHighlightProvider", "textDocument/documentHighlight"):
            found = connection.request("textDocument/documentHighlight", params)
            ranges = [h.get("range") for h in found if isinstance(h, dict)]
            ranges = ranges if isinstance(found, list) else []
        else:
            return None
    except ServerFailure:
        log.debug("%s gave no range for the name at %s", connection.name, occurrence, exc_info=True)
        return None
    line = context.lines[occurrence.line]
    for span in ranges:
        start, end = (span or {}).get("start"), (span or {}).get("end")
        if not (isinstance(start, dict) and isinstance(end, dict)):
            continue
        if start.get("line") != occurrence.line or end.get("line") != occurrence.line:
            continue
        first = from_wire_column(line, int(start.get("character", 0)), connection.encoding)
        last = from_wire_column(line, int(end.get("character", 0)), connection.encoding)
        if first <= occurrence.column < max(last, first + 1) and last > first:
            return line[first:last]
    return None


def resync(connection: ServerConnection, paths: list[Path]) -> None:
    """Tell the server the renamed files at once, so the next question sees them. The files
    are written by now: a server that died meanwhile (it is restarted on the next call and
    reads them then) must not turn a done rename into a reported failure."""
    for path in paths:
        connection.disk.forget(path)
        try:
            connection.documents.sync(path, connection.disk.read(path))
        except (ServerFailure, OSError):
            log.debug("%s: %s not re-sent after the rename", connection.name, path, exc_info=True)
