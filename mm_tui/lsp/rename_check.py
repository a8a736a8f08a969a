"""A rename's edits, asked until the server's whole index stands behind them (issue 13).

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

A server without references, or whose references fail, is trusted as before.
"""

from __future__ import annotations

import bisect
import logging
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.lsp.actions import ActionContext
from mm_tui.lsp.connection import ServerFailure
from mm_tui.lsp.documents import path_of_uri
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

Position = tuple[int, int]
Range = tuple[Position, Position]


@dataclass(frozen=True)
class RenameAnswer:
    """The server's WorkspaceEdit, and what its references say it misses (shown places)."""

    edit: Any
    missed: tuple[str, ...] = ()
    total: int = 0
    loading: bool = False

    def incomplete_reason(self, server: str) -> str:
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
        references = _references(context, occurrence)
        missed, total = missed_places(references, edits, old_name, context)
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
    connection = context.connection
    if not connection.offers("referencesProvider", "textDocument/references"):
        return None
    params = {**context.text_position(occurrence), "context": {"includeDeclaration": True}}
    try:
        return connection.request("textDocument/references", params)
    except ServerFailure:
        log.debug("%s: references for a rename's check failed", connection.name, exc_info=True)
        return None


def missed_places(
    references: Any,
    edits: dict[Path, list[dict[str, Any]]],
    old_name: str,
    context: ActionContext,
) -> tuple[list[str], int]:
    """The places (`path:line:column`, sorted) that name `old_name` in the references but
    that no edit touches, and how many places were checked.

    Only references inside the project whose text is the old name count: a server may list
    a place spelt otherwise (an alias, a constructor), which a rename rightly leaves alone.
    """
    real_root = Path(context.real_root)
    encoding = context.connection.encoding
    ranges = {path: sorted(_ranges(file_edits)) for path, file_edits in edits.items()}
    checked = 0
    missed: list[tuple[str, int, int]] = []
    for path, where in _locations(references):
        if not path.is_relative_to(real_root):
            continue
        (line, start), (end_line, end) = where
        lines = context.connection.disk.lines(path)
        if line != end_line or line >= len(lines):
            continue
        text = lines[line]
        first = from_wire_column(text, start, encoding)
        if text[first : from_wire_column(text, end, encoding)] != old_name:
            continue
        checked += 1
        if not _touched(ranges.get(path, []), where):
            missed.append((display_path(path, context.root), line + 1, first + 1))
    return [f"{shown}:{line}:{column}" for shown, line, column in sorted(set(missed))], checked


def _locations(answer: Any) -> list[tuple[Path, Range]]:
    found: list[tuple[Path, Range]] = []
    for item in answer if isinstance(answer, list) else []:
        if not isinstance(item, dict):
            continue
        uri, where = item.get("uri"), _range(item.get("range"))
        if isinstance(uri, str) and where is not None:
            found.append((path_of_uri(uri), where))
    return found


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
