"""Server answers turned into the lines the model reads (SPEC §4 `lsp` results).

Answers arrive as plain JSON (see framing.py) and are read leniently: an item of an
unexpected shape is skipped, never fatal. Every location comes back with its source line, so
the model needs no second call to see what it points at.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.documents import NotAFile, key_of_uri, real_path
from mm_tui.lsp.text import from_wire_column, shared_lines

log = logging.getLogger(__name__)

_SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
_SYMBOL_KINDS = [
    "file",
    "module",
    "namespace",
    "package",
    "class",
    "method",
    "property",
    "field",
    "constructor",
    "enum",
    "interface",
    "function",
    "variable",
    "constant",
    "string",
    "number",
    "boolean",
    "array",
    "object",
    "key",
    "null",
    "enum-member",
    "struct",
    "event",
    "operator",
    "type-parameter",
]


class Place(NamedTuple):
    """A position to show: the file's real path (as text: the documents' key), 0-based line,
    0-based column in characters. A tuple: made, compared and sorted at C speed."""

    path: str
    line: int
    column: int


def display_path(path: Path | str, root: Path | str) -> str:
    """Relative to the project root when inside it, absolute otherwise (SPEC §4)."""
    return _display(os.fspath(path), os.fspath(root))


@functools.lru_cache(maxsize=4096)
def _display(path: str, root: str) -> str:
    real, real_root = real_path(path), real_path(root)
    if real.is_relative_to(real_root):
        return real.relative_to(real_root).as_posix()
    return str(real)


class SourceLines:
    """The lines of the files an answer points into: the text the server has of an open file
    (synced from disk at the start of the call), else the stat-first reader's."""

    def __init__(
        self,
        known: dict[str, str] | None = None,
        disk: DiskTexts | None = None,
        sent: Callable[[str], str | None] = lambda key: None,
    ) -> None:
        self._disk = disk or DiskTexts()
        self._sent = sent
        self._known = known or {}  # split into lines when first read
        self._lines: dict[str, list[str]] = {}

    def line(self, path: Path | str, number: int) -> str:
        key = path if isinstance(path, str) else str(path)
        lines = self._lines.get(key)
        if lines is None:
            text = self._known.get(key)
            if text is None:
                text = self._sent(key)
            lines = shared_lines(text) if text is not None else self._disk.lines(key)
            self._lines[key] = lines
        return lines[number] if 0 <= number < len(lines) else ""


class WireLocation(NamedTuple):
    """One item of a location answer as the server counts: real path (text), line, wire
    columns."""

    path: str
    line: int
    start: int
    end_line: int
    end: int


def wire_locations(answer: Any) -> list[WireLocation]:
    """The items of a definition/references answer (Location, Location[], LocationLink[]),
    read once; an item of another shape is skipped."""
    items = answer if isinstance(answer, list) else [answer] if answer else []
    locations: list[WireLocation] = []
    for item in items:
        try:  # the usual shape, a Location with whole positions, read at C speed
            where = item["range"]
            start, end = where["start"], where["end"]
            at = (item["uri"], start["line"], start["character"], end["line"], end["character"])
            if tuple(map(type, at)) == _WHOLE_LOCATION and at[0] and min(at[1:]) >= 0:
                locations.append(WireLocation(key_of_uri(at[0]), *at[1:]))
                continue
        except (KeyError, TypeError, NotAFile):  # read (or skipped, said why) below
            pass
        if not isinstance(item, dict):
            continue
        uri = item.get("uri") or item.get("targetUri")
        where = item.get("range") or item.get("targetSelectionRange")
        if not isinstance(uri, str) or not isinstance(where, dict):
            continue
        start, end = where.get("start"), where.get("end")
        if not isinstance(start, dict):
            continue
        line, units = start.get("line"), start.get("character")
        if not isinstance(line, int) or not isinstance(units, int):
            continue
        end_line, end_units = _position(end) or (-1, 0)
        try:
            key = key_of_uri(uri)
        except NotAFile:  # an `untitled:` buffer, a NUL: no file to show
            log.debug("a location in %r was skipped: not a file", uri)
            continue
        locations.append(WireLocation(key, max(line, 0), max(units, 0), end_line, end_units))
    return locations


_WHOLE_LOCATION = (str, int, int, int, int)


def _position(value: Any) -> tuple[int, int] | None:
    if isinstance(value, dict):
        line, character = value.get("line"), value.get("character")
        if isinstance(line, int) and isinstance(character, int):
            return max(line, 0), max(character, 0)
    return None


def range_start(value: Any) -> tuple[int, int] | None:
    """The (line, wire column) where an LSP range starts."""
    return _position(value.get("start")) if isinstance(value, dict) else None


def places_of(locations: list[WireLocation], texts: list[str], encoding: str) -> list[Place]:
    """The places of an answer's locations (`texts`: the source line of each), columns in
    characters, duplicates removed, in order."""
    if len(locations) == 1:  # a definition's usual answer
        where, text = locations[0], texts[0]
        if text.isascii():  # one unit per character in every encoding
            return [Place(where.path, where.line, min(where.start, len(text)))]
        return [Place(where.path, where.line, from_wire_column(text, where.start, encoding))]
    return sorted(
        {
            Place(where.path, where.line, from_wire_column(text, where.start, encoding))
            for where, text in zip(locations, texts, strict=True)
        }
    )


def location_lines(places: list[Place], root: Path | str, sources: SourceLines) -> list[str]:
    """`path:line:column  <source line>`, 1-based, sorted by path then position."""
    root_text, line_of = os.fspath(root), sources.line
    if len(places) == 1:  # a definition's usual answer
        path, line, column = places[0]
        text = line_of(path, line).strip()
        return [f"{_display(path, root_text)}:{line + 1}:{column + 1}  {text}"]
    shown = [(_display(place.path, root_text), place) for place in places]
    if len(shown) > 1:
        shown.sort()
    return [
        f"{path}:{place.line + 1}:{place.column + 1}  {line_of(place.path, place.line).strip()}"
        for path, place in shown
    ]


def hover_text(answer: Any) -> str:
    """The server's hover text as sent: MarkupContent, MarkedString or a list of them."""
    contents = answer.get("contents") if isinstance(answer, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("value"), str):
            language = part.get("language")
            value = part["value"]
            texts.append(f"```{language}\n{value}\n```" if isinstance(language, str) else value)
    return "\n\n".join(text.strip("\n") for text in texts if text.strip())


def _symbol_kind(kind: Any) -> str:
    return _SYMBOL_KINDS[kind - 1] if isinstance(kind, int) and 0 < kind <= 26 else "symbol"


def _symbol_line(symbol: dict[str, Any], depth: int, line: int) -> str:
    detail = symbol.get("detail")
    detail_part = f"  [{' '.join(detail.split())}]" if isinstance(detail, str) and detail else ""
    name = symbol.get("name", "?")
    return f"{'  ' * depth}{_symbol_kind(symbol.get('kind'))} {name}{detail_part}  line {line + 1}"


def symbol_lines(answer: Any) -> list[str]:
    """`<kind> <name>  [<detail>]  line N` per symbol, children indented two spaces.

    Hierarchical answers (DocumentSymbol) carry their children; flat ones (SymbolInformation)
    are nested by range containment, which is what their ranges mean.
    """
    items = [item for item in answer if isinstance(item, dict)] if isinstance(answer, list) else []
    if any("location" in item for item in items):
        return _flat_symbol_lines(items)
    lines: list[str] = []

    def walk(symbols: list[dict[str, Any]], depth: int) -> None:
        for symbol in sorted(symbols, key=_symbol_start):
            lines.append(_symbol_line(symbol, depth, _symbol_start(symbol)[0]))
            children = symbol.get("children")
            if isinstance(children, list):
                walk([child for child in children if isinstance(child, dict)], depth + 1)

    walk(items, 0)
    return lines


def _symbol_start(symbol: dict[str, Any]) -> tuple[int, int]:
    start = range_start(symbol.get("selectionRange")) or range_start(symbol.get("range"))
    if start is None and isinstance(symbol.get("location"), dict):
        start = range_start(symbol["location"].get("range"))
    return start or (0, 0)


def _flat_symbol_lines(items: list[dict[str, Any]]) -> list[str]:
    def span(item: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, int]]:
        where = item.get("location", {}).get("range", {})
        end = _position(where.get("end")) if isinstance(where, dict) else None
        start = _symbol_start(item)
        return start, end or start

    ordered = sorted(
        items, key=lambda item: (span(item)[0], (-span(item)[1][0], -span(item)[1][1]))
    )
    lines: list[str] = []
    open_spans: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for item in ordered:
        start, end = span(item)
        while open_spans and not (open_spans[-1][0] <= start and end <= open_spans[-1][1]):
            open_spans.pop()
        lines.append(_symbol_line(item, len(open_spans), start[0]))
        open_spans.append((start, end))
    return lines


def diagnostic_lines(
    diagnostics: Iterable[dict[str, Any]],
    shown: str,
    text_lines: list[str],
    encoding: str,
    root: Path | None = None,
) -> list[str]:
    """`<severity> path:line:column <message> [<source>]`, in file order."""
    found: list[tuple[int, int, str]] = []
    for diagnostic in diagnostics:
        line, units = range_start(diagnostic.get("range")) or (0, 0)
        source_line = text_lines[line] if line < len(text_lines) else ""
        column = from_wire_column(source_line, units, encoding)
        level = diagnostic.get("severity")
        # Unset: an error.
        severity = _SEVERITIES.get(level, "error") if isinstance(level, int) else "error"
        message = readable_message(str(diagnostic.get("message", "")), root)
        source = diagnostic.get("source")
        source_part = f" [{source}]" if isinstance(source, str) and source else ""
        text = f"{severity} {shown}:{line + 1}:{column + 1} {message}{source_part}"
        found.append((line, column, text))
    return [text for _, _, text in sorted(found)]


def readable_message(message: str, root: Path | None) -> str:
    """A diagnostic's message on one line: its lines joined by "; " (pyright and clangd write
    several), spaces collapsed, the project's absolute paths made relative (SPEC §4)."""
    text = ""
    for part in (" ".join(line.split()) for line in message.splitlines()):
        if part:  # a line ending in ":" introduces the next one: no "; " between them
            text += ("; " if text and not text.endswith(":") else " ") + part
    text = text.strip()
    if root is not None:
        for prefix in {os.fspath(root), os.path.realpath(root)}:
            text = text.replace(prefix.rstrip("/") + "/", "")
    return text
