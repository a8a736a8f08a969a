"""The reading actions of the `lsp` tool against one started server (SPEC §4).

Each action gets a file already synced from disk and, for the positional ones, the places
to try in order (see symbols.py); it asks until the server answers something, and returns
the text for the model. Every action waits (bounded) for the server to be ready, and asks
again when an answer came while the server was still loading and looks like it: nothing
found, an error, or only an import line of the asked file (typescript-language-server answers
the import instead of the definition until its project is loaded). Failures are text too.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import ServerConnection, ServerFailure
from mm_tui.lsp.documents import SyncedDocument, real_path
from mm_tui.lsp.encoding_check import Span
from mm_tui.lsp.formatting import (
    Place,
    SourceLines,
    WireLocation,
    hover_text,
    location_lines,
    places_of,
    symbol_lines,
    wire_locations,
)
from mm_tui.lsp.symbols import Occurrence, identifier_at
from mm_tui.lsp.text import shared_lines, to_wire_column
from mm_tui.lsp.words import COMMON

log = logging.getLogger(__name__)

#: At most this many occurrences of a symbol are tried before giving up.
MAX_TRIES = 8
#: At most this many files an answer points into are opened on the server per answer.
_OPENED_PER_ANSWER = 20
#: How long to wait for news between two tries while a young server loads unsaid.
_RETRY_PAUSE = 0.5
#: The same, after an empty answer about a file the server was just sent.
_FRESH_PAUSE = 0.15
#: An import or include statement, in the common languages.
_IMPORT_LINE = re.compile(r"^\s*(import\b|from\s+\S+\s+import\b|#\s*include\b|use\b|using\b)")

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
EMPTY, IMPORT_ONLY, LOCAL_ONLY, STALE = "empty", "import-only", "local-only", "stale"
#: Doubts that hold while the server is young even when it does not say it is loading.
_YOUNG_DOUBTS = (IMPORT_ONLY, LOCAL_ONLY)
#: Error answers that say "ask again": ContentModified and ServerCancelled (LSP 3.17).
#: rust-analyzer answers ContentModified "content modified" when a change cancelled the
#: request, and (until 2023) "waiting for cargo metadata or cargo check" while it loaded.
RETRY_CODES = (-32801, -32802)
NO_SYMBOLS = "no symbols in {path}"


class ActionContext:
    """Everything an action needs about the call (a plain class with slots: one is made by
    every call, and a dataclass with a default factory or cached properties costs more)."""

    __slots__ = (
        "_real_root",
        "_sources",
        "connection",
        "document",
        "path",
        "root",
        "asked",
        "root_text",
        "rule",
        "served_names",
        "shown",
        "unsure",
    )

    def __init__(
        self,
        connection: ServerConnection,
        root: Path,
        path: str,
        shown: str,  # the file's path as the model reads it
        document: SyncedDocument,
        root_text: str | None = None,  # `root` as text, when the caller has it
    ) -> None:
        self.connection, self.root, self.path = connection, root, path
        self.shown, self.document = shown, document
        self.root_text = os.fspath(root) if root_text is None else root_text
        #: Set by an answer that looks like a loading server's (see the module's docstring):
        #: EMPTY is doubted while the server says it loads, IMPORT_ONLY while it is young too,
        #: STALE (an error answer that says to ask again) always, within the bound.
        self.unsure = [""]
        self.rule = COMMON  # what counts as one name in the file's language (words.py)
        #: The symbol asked ("" for a line and column) and the new name as written.
        self.asked: tuple[str, str] = ("", "")
        #: The name at a place as the server's own range has it (rename_action.py).
        self.served_names: dict[Occurrence, str] = {}
        self._sources: SourceLines | None = None
        self._real_root: str | None = None

    @property
    def lines(self) -> list[str]:
        return shared_lines(self.document.text)  # remembered by text: no lock of a cache

    def failed(self, action: str, reason: str) -> Failed:
        return Failed(
            ACTION_FAILED.format(server=self.connection.name, action=action, reason=reason)
        )

    def text_position(self, occurrence: Occurrence) -> dict[str, Any]:
        """The `textDocument` + wire `position` params for an occurrence."""
        lines = shared_lines(self.document.text)
        line_text = lines[occurrence.line] if occurrence.line < len(lines) else ""
        prefix = line_text[: occurrence.column]
        if prefix.isascii():  # one unit per character in every encoding
            character = len(prefix)
        else:
            character = to_wire_column(line_text, occurrence.column, self.connection.encoding)
        return {
            "textDocument": {"uri": self.document.uri},
            "position": {"line": occurrence.line, "character": character},
        }

    def name_at(self, occurrence: Occurrence) -> str:
        """The identifier the occurrence points into, as the file has it."""
        lines = shared_lines(self.document.text)
        if not lines:
            return ""
        served = self.served_names.get(occurrence)
        if served is not None:
            return served
        return identifier_at(lines[occurrence.line], occurrence.column, self.rule)

    def sources(self) -> SourceLines:
        """The lines of the files answers point into (one reader per call)."""
        sources = self._sources
        if sources is None:
            connection, document = self.connection, self.document
            sources = SourceLines(
                {document.key: document.text}, connection.disk, connection.documents.text_of
            )
            self._sources = sources
        return sources

    def places(self, answer: Any, name: str) -> list[Place]:
        """The places of a location answer, its columns checked against `name` first.

        The project's files it points into are opened on the server: from then on each is
        re-sent when it changes on disk, as the asked files are. A server reads the other
        files from disk only when told they changed (gopls answered from a stale greet.go
        after bash edited it), and mm-tui watches no files.
        """
        locations = wire_locations(answer)
        if not locations:
            return []
        line_of, connection = self.sources().line, self.connection
        if len(locations) == 1:  # a definition's usual answer
            texts = [line_of(locations[0].path, locations[0].line)]
        else:
            texts = [line_of(where.path, where.line) for where in locations]
        if not all(map(str.isascii, texts)):  # ASCII lines read the same in every encoding
            connection.check_encoding(location_spans(locations, texts), name)
        places = places_of(locations, texts, connection.encoding)
        self._open_targets(places)
        return places

    def _open_targets(self, places: list[Place]) -> None:
        documents, disk = self.connection.documents, self.connection.disk
        if len(places) == 1 and documents.is_open(places[0].path):  # a definition, usually
            return
        closed = documents.not_open([place.path for place in places])
        if not closed:
            return
        extensions = tuple(e.lower() for e in self.connection.spec.extensions)
        inside = os.path.join(self.real_root, "")
        for key in sorted(closed)[:_OPENED_PER_ANSWER]:
            if not key.startswith(inside) or os.path.splitext(key)[1].lower() not in extensions:
                continue
            try:
                documents.sync(Path(key), disk.read(key))
            except OSError:
                log.debug("%s could not be opened on %s", key, self.connection.name, exc_info=True)

    @property
    def real_root(self) -> str:
        if self._real_root is None:
            self._real_root = str(real_path(self.root))
        return self._real_root


def location_spans(locations: list[WireLocation], texts: list[str]) -> list[Span]:
    """The one-line ranges of a location answer, with their lines (`texts`, one per
    location): what encoding_check reads."""
    return [
        (text, where.start, where.end)
        for where, text in zip(locations, texts, strict=True)
        if where.end_line == where.line
    ]


def first_answer(
    context: ActionContext,
    action: str,
    targets: Sequence[Occurrence],
    ask: Callable[[Occurrence], Text | Failed | None],
) -> Text | Failed:
    """Try each target until one gives an answer; say why none did (SPEC §4 `symbol`)."""
    first_error: str | None = None
    stale = False
    for occurrence in targets[:MAX_TRIES]:
        try:
            answer = ask(occurrence)
        except ServerFailure as failure:
            if failure.final:
                return context.failed(action, str(failure))
            first_error = first_error or str(failure)
            stale = stale or failure.code in RETRY_CODES
            continue
        if answer is not None:
            return answer
    # An error answer or nothing: worth asking again while loading (always, when it said so).
    context.unsure[0] = STALE if stale else EMPTY
    if first_error is not None:
        return context.failed(action, first_error)
    first = targets[0]
    place = f"{context.shown}:{first.line + 1}:{first.column + 1}"
    return Failed(NOTHING_FOUND[action].format(place=place))


def when_ready(context: ActionContext, attempt: Callable[[], Text | Failed]) -> Text | Failed:
    """`attempt` once the server is ready, again while its answers look like loading ones.

    Bounded: the indexing time limit for the first wait, and once more from the first
    doubtful answer (a loading server may hold the first request for seconds). A server
    that never reports progress is not waited for on a clock; only an empty answer about a
    file it was just sent is asked again, briefly (`_fresh_retry`).
    """
    connection, state = context.connection, context.connection.state
    was_loading = state.loading
    if was_loading:
        state.wait_until_indexed(connection.timeouts.indexing)
        was_loading = state.loading
    deadline: float | None = None
    fresh: list[float] = []  # the deadline of the fresh-file retries, once begun
    while True:
        mark = state.progress_begun
        analysed = _analysed(context)
        context.unsure[0] = ""
        answer = attempt()
        if not context.unsure[0]:  # sure, or a refusal (read-only file…): never retried
            return answer
        young = context.unsure[0] in _YOUNG_DOUBTS and connection.young and state.speaks_progress
        # Progress begun during the attempt counts: rust-analyzer answers null while its
        # project loads, and may begin saying so only once asked.
        loading = was_loading or state.loading_since(mark) or young
        if context.unsure[0] == STALE:
            loading = True
        if connection.exited:
            return answer
        if not loading:
            if not _fresh_retry(context, analysed, fresh):
                return answer
            continue
        deadline = deadline or time.monotonic() + connection.timeouts.indexing
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return answer
        if state.loading:
            state.wait_until_indexed(remaining)
        else:
            state.wait_for_news(min(_RETRY_PAUSE, remaining))
        was_loading = state.loading


def _analysed(context: ActionContext) -> bool:
    """Whether the server published diagnostics for the version of the file asked about:
    the sign it has read it."""
    document = context.document
    return context.connection.state.publication_for(document.key, document.version) is not None


def _fresh_retry(context: ActionContext, analysed: bool, fresh: list[float]) -> bool:
    """After an empty answer about a file the server was just sent (opened or changed by
    this call): wait a little and say to ask again, within `Timeouts.fresh_answer`, unless
    the server had already published for this version when it was asked."""
    if context.unsure[0] != EMPTY or not context.document.changed or analysed:
        return False
    if not fresh:
        fresh.append(time.monotonic() + context.connection.timeouts.fresh_answer)
    remaining = fresh[0] - time.monotonic()
    if remaining <= 0:
        return False
    context.connection.state.wait_for_news(min(_FRESH_PAUSE, remaining))
    return True


def only_imports_of_the_file(context: ActionContext, places: list[Place]) -> bool:
    """Whether every place is an import line of the asked file (a loading server's answer)."""
    key = context.document.key
    if not places or places[0].path != key:  # the usual answer: another file
        return False
    return all(
        place.path == key
        and place.line < len(context.lines)
        and _IMPORT_LINE.match(context.lines[place.line]) is not None
        for place in places
    )


def definition(context: ActionContext, targets: Sequence[Occurrence]) -> Text | Failed:
    def ask(occurrence: Occurrence) -> Text | None:
        found = context.connection.request(
            "textDocument/definition", context.text_position(occurrence)
        )
        places = context.places(found, context.name_at(occurrence))
        if not places:
            return None
        key = context.document.key  # an answer in another file is no import line of this one
        imports = places[0].path == key and only_imports_of_the_file(context, places)
        context.unsure[0] = IMPORT_ONLY if imports else ""
        return Text("\n".join(location_lines(places, context.root_text, context.sources())))

    return when_ready(context, lambda: first_answer(context, "definition", targets, ask))


def references(context: ActionContext, targets: Sequence[Occurrence]) -> Text | Failed:
    def ask(occurrence: Occurrence) -> Text | None:
        params = {**context.text_position(occurrence), "context": {"includeDeclaration": True}}
        found = context.connection.request("textDocument/references", params)
        places = context.places(found, context.name_at(occurrence))
        if not places:
            return None
        # Uses in the asked file only, from a server just started: it may not have read the
        # project yet (typescript-language-server, clangd's background index).
        local = all(place.path == context.document.key for place in places)
        context.unsure[0] = LOCAL_ONLY if local else ""
        header = REFERENCES_HEADER.format(count=len(places))
        lines = location_lines(places, context.root_text, context.sources())
        return Text("\n".join([header, *lines]))

    return when_ready(context, lambda: first_answer(context, "references", targets, ask))


def hover(context: ActionContext, targets: Sequence[Occurrence]) -> Text | Failed:
    def ask(occurrence: Occurrence) -> Text | None:
        found = context.connection.request("textDocument/hover", context.text_position(occurrence))
        text = hover_text(found)
        return Text(text) if text else None

    return when_ready(context, lambda: first_answer(context, "hover", targets, ask))


def symbols(context: ActionContext) -> Text | Failed:
    def attempt() -> Text | Failed:
        params = {"textDocument": {"uri": context.document.uri}}
        try:
            found = context.connection.request("textDocument/documentSymbol", params)
        except ServerFailure as failure:
            context.unsure[0] = STALE if failure.code in RETRY_CODES else EMPTY
            return context.failed("symbols", str(failure))
        lines = symbol_lines(found)
        context.unsure[0] = "" if lines else EMPTY
        return Text("\n".join(lines) if lines else NO_SYMBOLS.format(path=context.shown))

    return when_ready(context, attempt)
