"""A rename's edits, asked until the server's whole index stands behind them.

clangd and typescript-language-server answer `textDocument/rename` from what they indexed so
far: under load they renamed the symbol in the asked file only, and the rename looked done.
Two checks, for any server that answers from a partial index:

- an answer given while the server reported indexing progress (open when it was asked, or
  begun since) is asked again once the progress ends, within the indexing time limit;
- the edits are compared with the server's own `textDocument/references` (declaration
  included): a place holding the old name that no edit touches means the rename is
  incomplete. It is asked again while the limit lasts; after that it is refused whole,
  nothing written, the missed places named. A half-renamed project does not compile, and
  the model would mend it with edit_file, which the tool tells it not to do for a rename.

A place outside the project root that holds the old name refuses the rename at once: no
edit may reach it (SPEC §6), and asking again cannot change that. clangd renamed the calls in
main.c and left the declaration in a header linked in from outside: code that no longer
compiles. Unless an edit keeps the old name beside the new one (typescript-language-server
writes `import { greet as salute }` when it may not rename the declaration).

A server without references, or whose references fail, is trusted as before.
"""

from __future__ import annotations

import bisect
import logging
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.lsp.actions import ActionContext
from mm_tui.lsp.connection import ServerFailure
from mm_tui.lsp.documents import NotAFile, path_of_uri
from mm_tui.lsp.formatting import display_path
from mm_tui.lsp.symbols import Occurrence
from mm_tui.lsp.text import from_wire_column
from mm_tui.lsp.workspace_edit import edits_by_file

log = logging.getLogger(__name__)

#: The pause between two tries when the server says nothing of loading.
_RETRY_PAUSE = 0.5
#: At most this many missed places are named in the refusal.
_NAMED = 5

INCOMPLETE = (
    "{server}'s edits leave the name unchanged at {count} of the {total} places its "
    "references list ({places})"
)
STILL_INDEXING = "; it is still indexing the project, call again in a moment"
OUTSIDE = (
    "the symbol is also declared or used at {count} place(s) outside the project root, "
    "which a rename never edits ({places})"
)

Position = tuple[int, int]
Range = tuple[Position, Position]


@dataclass(frozen=True)
class RenameAnswer:
    """The server's WorkspaceEdit, and what its references say it misses (shown places)."""

    edit: Any
    missed: tuple[str, ...] = ()
    total: int = 0
    loading: bool = False
    outside: tuple[str, ...] = ()  # places outside the root left with the old name

    def incomplete_reason(self, server: str) -> str:
        if self.outside:
            named = ", ".join(self.outside[:_NAMED]) + (", …" if len(self.outside) > _NAMED else "")
            return OUTSIDE.format(count=len(self.outside), places=named)
        named = ", ".join(self.missed[:_NAMED]) + (", …" if len(self.missed) > _NAMED else "")
        reason = INCOMPLETE.format(
            server=server, count=len(self.missed), total=self.total, places=named
        )
        return reason + (STILL_INDEXING if self.loading else "")


def settled_rename(context: ActionContext, occurrence: Occurrence, new_name: str) -> RenameAnswer:
    """The server's rename at `occurrence`, asked again (bounded) while it looks partial.

    Raises ServerFailure as a request does. An empty answer is returned at once: the caller
    tries the next occurrence, and `when_ready` asks again while the server loads.
    """
    connection, state = context.connection, context.connection.state
    deadline = time.monotonic() + connection.timeouts.indexing
    params = {**context.text_position(occurrence), "newName": new_name}
    old_name = context.name_at(occurrence)
    while True:
        mark = state.progress_begun
        edit = connection.request("textDocument/rename", params)
        edits = edits_by_file(edit)
        if not any(edits.values()) or connection.exited:
            return RenameAnswer(edit)
        if state.loading_since(mark) and time.monotonic() < deadline:
            log.debug("%s answered rename while indexing: asked again after", connection.name)
            state.wait_until_indexed(deadline - time.monotonic())
            continue
        # The definition too: clangd's references leave out a declaration in a header it
        # did not index (one linked in from outside the project).
        listed = [*_listed(_references(context, occurrence))]
        listed += _listed(_asked(context, occurrence, "definition", {}))
        missed, total, outside = missed_places(listed, edits, old_name, context)
        if outside and not _keeps_name(edits, old_name):
            return RenameAnswer(edit, tuple(missed), total, state.loading, tuple(outside))
        remaining = deadline - time.monotonic()
        if not missed or remaining <= 0 or connection.exited:
            return RenameAnswer(edit, tuple(missed), total, state.loading)
        log.debug("%s's rename misses %s: asked again", connection.name, ", ".join(missed))
        if state.loading:
            state.wait_until_indexed(remaining)
        else:
            state.wait_for_news(min(_RETRY_PAUSE, remaining))


def _references(context: ActionContext, occurrence: Occurrence) -> Any:
    """The server's references at the rename's place, or None when it cannot tell."""
    declaration = {"context": {"includeDeclaration": True}}
    return _asked(context, occurrence, "references", declaration)


def _asked(context: ActionContext, occurrence: Occurrence, kind: str, extra: dict[str, Any]) -> Any:
    """The server's `references` or `definition` at the rename's place, or None when it
    does not offer them or fails."""
    connection = context.connection
    if not connection.offers(f"{kind}Provider", f"textDocument/{kind}"):
        return None
    try:
        return connection.request(
            f"textDocument/{kind}", {**context.text_position(occurrence), **extra}
        )
    except ServerFailure:
        log.debug("%s: %s for a rename's check failed", connection.name, kind, exc_info=True)
        return None


def _listed(answer: Any) -> list[Any]:
    """A location answer as a list (a definition may be one Location)."""
    return answer if isinstance(answer, list) else [answer] if isinstance(answer, dict) else []


def missed_places(
    references: Any,
    edits: dict[Path, list[dict[str, Any]]],
    old_name: str,
    context: ActionContext,
) -> tuple[list[str], int, list[str]]:
    """The places (`path:line:column`, sorted) that name `old_name` in the references but
    that no edit touches, how many places were checked, and the untouched ones outside the
    project root (absolute: no edit may reach them).

    Only references inside the project whose text is the old name count: a server may list
    a place spelt otherwise (an alias, a constructor), which a rename rightly leaves alone.
    """
    real_root = Path(context.real_root)
    encoding = context.connection.encoding
    ranges = {path: sorted(_ranges(file_edits)) for path, file_edits in edits.items()}
    checked = 0
    missed: list[tuple[str, int, int]] = []
    outside: set[tuple[str, int, int]] = set()
    for path, where in _locations(references):
        (line, start), (end_line, end) = where
        lines = context.connection.disk.lines(path)
        if line != end_line or line >= len(lines):
            continue
        text = lines[line]
        first = from_wire_column(text, start, encoding)
        if text[first : from_wire_column(text, end, encoding)] != old_name:
            continue
        place = (display_path(path, context.root), line + 1, first + 1)
        if not path.is_relative_to(real_root):
            if not _touched(ranges.get(path, []), where):
                outside.add(place)
            continue
        checked += 1
        if not _touched(ranges.get(path, []), where):
            missed.append(place)
    return _shown(set(missed)), checked, _shown(outside)


def _shown(places: set[tuple[str, int, int]]) -> list[str]:
    return [f"{shown}:{line}:{column}" for shown, line, column in sorted(places)]


def _keeps_name(edits: dict[Path, list[dict[str, Any]]], old_name: str) -> bool:
    """Whether an edit writes the old name again (`greet as salute`): the server bridges the
    two names on purpose where it may not rename the declaration."""
    return any(
        old_name in re.findall(r"[\w$]+", str(edit.get("newText", "")))
        for file_edits in edits.values()
        for edit in file_edits
    )


def _locations(answer: Any) -> list[tuple[Path, Range]]:
    """Each place of a Location or LocationLink list once (a declaration may be listed by
    references and by definition)."""
    found: dict[tuple[Path, Range], None] = {}
    for item in answer if isinstance(answer, list) else []:
        if not isinstance(item, dict):
            continue
        uri = item.get("uri") or item.get("targetUri")
        where = _range(item.get("range") or item.get("targetSelectionRange"))
        if isinstance(uri, str) and where is not None:
            try:
                found[(path_of_uri(uri), where)] = None
            except NotAFile:
                log.debug("a reference in %r was skipped: not a file", uri)
    return list(found)


def _ranges(edits: list[dict[str, Any]]) -> list[Range]:
    return [where for edit in edits if (where := _range(edit.get("range"))) is not None]


def _range(value: Any) -> Range | None:
    if not isinstance(value, dict):
        return None
    start, end = _position(value.get("start")), _position(value.get("end"))
    return (start, end) if start is not None and end is not None else None


def _position(value: Any) -> Position | None:
    if isinstance(value, dict):
        line, character = value.get("line"), value.get("character")
        if isinstance(line, int) and isinstance(character, int):
            return line, character
    return None


def _touched(ranges: list[Range], name: Range) -> bool:
    """Whether one of a file's edit ranges (sorted) touches `name`: only the last few that
    start before its end can (a huge rename must not compare every pair)."""
    after = bisect.bisect_right(ranges, (name[1], (sys.maxsize, sys.maxsize)))
    return any(_touches(edit, name) for edit in ranges[max(0, after - 3) : after])


def _touches(edit: Range, name: Range) -> bool:
    """Whether an edit changes the text of `name`'s range: they overlap, or it inserts
    inside it (a diff-style edit may replace a few letters only, jedi's do)."""
    (edit_start, edit_end), (name_start, name_end) = edit, name
    if edit_start == edit_end:
        return name_start <= edit_start <= name_end
    return edit_start < name_end and edit_end > name_start
