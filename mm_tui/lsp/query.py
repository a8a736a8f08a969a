"""One call of the `lsp` tool, as the model sent it (SPEC §4 `lsp` fields).

A light module: the tool declares its schema from it without loading the client.
"""

from __future__ import annotations

from typing import NamedTuple

ACTIONS = ("definition", "references", "hover", "symbols", "diagnostics", "rename")
#: The actions that ask about one place of the file: a symbol, or a line and column.
POSITIONAL_ACTIONS = ("definition", "references", "hover", "rename")


class LspQuery(NamedTuple):
    """The fields of one call; `path` relative to the project root, or absolute. A tuple:
    made at C speed by every call (a frozen dataclass sets each field through a slow path)."""

    action: str
    path: str
    symbol: str = ""
    line: int = 0
    column: int = 0
    new_name: str = ""
