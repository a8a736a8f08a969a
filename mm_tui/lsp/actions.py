"""The six actions of the `lsp` tool against one started server (SPEC §4).

Each action gets a file already synced from disk and, for the positional ones, the places
to try in order (see symbols.py); it asks until the server answers something, and returns
the text for the model. Failures are text too: a tool never raises (SPEC §1).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import ServerConnection, ServerFailure
from mm_tui.lsp.documents import SyncedDocument, read_text
from mm_tui.lsp.formatting import (
    SourceLines,
    diagnostic_lines,
    display_path,
    hover_text,
    location_lines,
    places_of,
    symbol_lines,
)
from mm_tui.lsp.symbols import Occurrence
from mm_tui.lsp.text import split_lines, to_wire_column
from mm_tui.lsp.workspace_edit import EditRefused, changes_diff, plan_changes, write_changes

#: At most this many occurrences of a symbol are tried before giving up.
MAX_TRIES = 8

NOTHING_FOUND = {
    "definition": "[lsp: no definition found for the symbol at {place}]",
    "references": "[lsp: no references found for the symbol at {place}]",
    "hover": "[lsp: no hover information for the symbol at {place}]",
    "rename": "[lsp: the server has no rename for the symbol at {place}]",
}
ACTION_FAILED = "[lsp: {server}: {action} failed: {reason}]"
NOT_OFFERED = "[lsp: {server} does not offer {action}]"
#: The capability announcing each action, and its method (which may be registered later).
PROVIDERS = {
    "definition": ("definitionProvider", "textDocument/definition"),
    "references": ("referencesProvider", "textDocument/references"),
    "hover": ("hoverProvider", "textDocument/hover"),
    "symbols": ("documentSymbolProvider", "textDocument/documentSymbol"),
    "rename": ("renameProvider", "textDocument/rename"),
}
REFERENCES_HEADER = "{count} reference(s):"
NO_SYMBOLS = "no symbols in {path}"
DIAGNOSTICS_HEADER = "{count} diagnostic(s) in {path}{suffix}:"
CLEAN = "no diagnostics: {path} is clean{suffix}"
AS_LAST_PUBLISHED = " (as last published)"
NO_PUBLICATION = (
    "no diagnostics received for {path} within {seconds:g}s "
    "({server} may still be analysing the project; call diagnostics again)"
)
RENAMED = "renamed to {new_name}: {edits} edit(s) in {files} file(s)"
RENAME_PREVIEW = "rename to {new_name}: {edits} edit(s) in {files} file(s)"
RENAME_FILE_LINE = "{path}: {edits} edit(s)"
RENAME_REFUSED = "[lsp: rename refused: {reason} — nothing was written]"


@dataclass(frozen=True)
class ActionContext:
    """Everything an action needs about the call."""

    connection: ServerConnection
    root: Path
    path: Path
    shown: str  # the file's path as the model reads it
    document: SyncedDocument

    @functools.cached_property
    def lines(self) -> list[str]:
        return split_lines(self.document.text)

    def failed(self, action: str, reason: str) -> Failed:
        return Failed(
            ACTION_FAILED.format(server=self.connection.name, action=action, reason=reason)
        )

    def text_position(self, occurrence: Occurrence) -> dict[str, Any]:
        """The `textDocument` + wire `position` params for an occurrence."""
        lines = self.lines
        line_text = lines[occurrence.line] if occurrence.line < len(lines) else ""
        character = to_wire_column(line_text, occurrence.column, self.connection.encoding)
        return {
            "textDocument": {"uri": self.document.uri},
            "position": {"line": occurrence.line, "character": character},
        }

    def sources(self) -> SourceLines:
        return SourceLines({self.document.key: self.document.text})


async def _first_answer(
    context: ActionContext,
    action: str,
    targets: list[Occurrence],
    ask: Callable[[Occurrence], Awaitable[Text | Failed | None]],
) -> Text | Failed:
    """Try each target until one gives an answer; say why none did (SPEC §4 `symbol`)."""
    first_error: str | None = None
    for occurrence in targets[:MAX_TRIES]:
        try:
            answer = await ask(occurrence)
        except ServerFailure as failure:
            if failure.final:
                return context.failed(action, str(failure))
            first_error = first_error or str(failure)
            continue
        if answer is not None:
            return answer
    if first_error is not None:
        return context.failed(action, first_error)
    first = targets[0]
    place = f"{context.shown}:{first.line + 1}:{first.column + 1}"
    return Failed(NOTHING_FOUND[action].format(place=place))


async def definition(context: ActionContext, targets: list[Occurrence]) -> Text | Failed:
    async def ask(occurrence: Occurrence) -> Text | Failed | None:
        found = await context.connection.request(
            "textDocument/definition", context.text_position(occurrence)
        )
        sources = context.sources()
        places = places_of(found, sources, context.connection.encoding)
        return Text("\n".join(location_lines(places, context.root, sources))) if places else None

    return await _first_answer(context, "definition", targets, ask)


async def references(context: ActionContext, targets: list[Occurrence]) -> Text | Failed:
    await context.connection.wait_until_indexed()

    async def ask(occurrence: Occurrence) -> Text | Failed | None:
        params = {**context.text_position(occurrence), "context": {"includeDeclaration": True}}
        found = await context.connection.request("textDocument/references", params)
        sources = context.sources()
        places = places_of(found, sources, context.connection.encoding)
        if not places:
            return None
        header = REFERENCES_HEADER.format(count=len(places))
        return Text("\n".join([header, *location_lines(places, context.root, sources)]))

    return await _first_answer(context, "references", targets, ask)


async def hover(context: ActionContext, targets: list[Occurrence]) -> Text | Failed:
    async def ask(occurrence: Occurrence) -> Text | Failed | None:
        found = await context.connection.request(
            "textDocument/hover", context.text_position(occurrence)
        )
        text = hover_text(found)
        return Text(text) if text else None

    return await _first_answer(context, "hover", targets, ask)


async def symbols(context: ActionContext) -> Text | Failed:
    params = {"textDocument": {"uri": context.document.uri}}
    try:
        found = await context.connection.request("textDocument/documentSymbol", params)
    except ServerFailure as failure:
        return context.failed("symbols", str(failure))
    lines = symbol_lines(found)
    return Text("\n".join(lines) if lines else NO_SYMBOLS.format(path=context.shown))


async def diagnostics(context: ActionContext) -> Text | Failed:
    """Pulled when the server offers it, else the pushed ones, waiting up to 3 s (SPEC §4)."""
    connection, document = context.connection, context.document
    # A fresh server may register pull diagnostics and apply its settings only once it has
    # scanned the project: asking before would wait for pushes that never come.
    await connection.wait_until_indexed()
    suffix = ""
    if connection.offers("diagnosticProvider", "textDocument/diagnostic"):
        params = {"textDocument": {"uri": document.uri}}
        try:
            report = await connection.request("textDocument/diagnostic", params)
        except ServerFailure as failure:
            return context.failed("diagnostics", str(failure))
        items = report.get("items") if isinstance(report, dict) else None
        found = (
            [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
        )
    else:
        timeout = connection.timeouts.diagnostics
        publication = connection.publication_for(document.key, document.version)
        if not document.changed and publication is not None:
            suffix = AS_LAST_PUBLISHED
        else:
            publication = await connection.wait_for_publication(
                document.key, document.version, timeout
            )
        if publication is None:
            return Text(
                NO_PUBLICATION.format(path=context.shown, seconds=timeout, server=connection.name)
            )
        found = publication.diagnostics
    lines = diagnostic_lines(found, context.shown, context.lines, connection.encoding)
    if not lines:
        return Text(CLEAN.format(path=context.shown, suffix=suffix))
    header = DIAGNOSTICS_HEADER.format(count=len(lines), path=context.shown, suffix=suffix)
    return Text("\n".join([header, *lines]))


def needs_new_name(shown: str, symbol: str) -> str:
    """The refusal of a rename without a new name, with the call to make instead."""
    call = (
        f'{{"action": "rename", "path": {json.dumps(shown)}, "symbol": {json.dumps(symbol)}, '
        f'"new_name": "<the new identifier>"}}'
    )
    return f"[lsp: rename needs new_name — call lsp again with {call}; do not use edit_file for a rename]"


async def rename(
    context: ActionContext, targets: list[Occurrence], new_name: str, *, write: bool
) -> Text | Failed:
    """Ask the server for the rename's edits; with `write`, apply them and resync the files."""
    connection = context.connection
    await connection.wait_until_indexed()  # every file that uses the name must be known

    async def ask(occurrence: Occurrence) -> Text | Failed | None:
        params = {**context.text_position(occurrence), "newName": new_name}
        edit = await connection.request("textDocument/rename", params)
        try:
            changes = plan_changes(edit, context.root, connection.encoding)
        except EditRefused as refusal:
            return Failed(RENAME_REFUSED.format(reason=refusal))
        if not changes:
            return None
        diff = changes_diff(changes, context.root)
        if write:
            try:
                write_changes(changes)
            except OSError as error:
                return context.failed("rename", f"writing {error.filename}: {error.strerror}")
            for change in changes:  # the server sees the renamed code at once
                connection.documents.sync(change.path, read_text(change.path))
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

    return await _first_answer(context, "rename", targets, ask)
