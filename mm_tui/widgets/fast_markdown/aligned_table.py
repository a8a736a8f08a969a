"""Markdown tables in an answer honour their columns' alignment (`| :-- | :-: | --: |`).

Textual 8.2.8's `MarkdownTable` draws every cell left-aligned: markdown-it puts a column's
alignment on each `th`/`td` token (`style="text-align:right"`) and Textual drops it. Here the
table reads it from its header cells and sets each cell's `text-align`, when it is composed and
again when streamed rows are added. GFM's rules stand: a delimiter row whose cell count is not
the header's makes no table at all, and a row's extra cells are dropped (markdown-it does both).
Textual's private classes and members come through mm_tui/widgets/textual_private.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from markdown_it.token import Token
from textual.app import ComposeResult
from textual.content import Content
from textual.widget import Widget

from mm_tui.widgets.textual_private import (
    MarkdownBlock,
    MarkdownTable,
    MarkdownTH,
    RowsUpdateHook,
    block_token,
    child_blocks,
    table_headers_and_rows,
)

Alignment = Literal["left", "center", "right"]
_ALIGNMENTS: dict[str, Alignment] = {
    "text-align:left": "left",
    "text-align:center": "center",
    "text-align:right": "right",
}


def cell_alignment(token: Token) -> Alignment:
    """A `th_open` / `td_open` token's alignment; `left` when the column sets none."""
    return _ALIGNMENTS.get(str(token.attrs.get("style", "")).replace(" ", ""), "left")


def fit_cell(cell: Content, width: int, alignment: Alignment) -> Content:
    """`cell` cut to `width` (with an ellipsis) and padded to it on the side its column says.

    (Textual's `Content.center` pads a centred cell past `width`; this does not.)"""
    cut = cell.rstrip().truncate(width, ellipsis=True)
    room = max(0, width - cut.cell_length)
    if alignment == "right":
        return cut.pad_left(room)
    if alignment == "center":
        return cut.pad(room // 2, room - room // 2)
    return cut.pad_right(room)


def _align(cells: Iterable[Widget], alignments: Sequence[Alignment]) -> None:
    """Cells in the grid's order (the header row, then each row): column = index modulo."""
    if not alignments:
        return
    for index, cell in enumerate(cells):
        cell.styles.text_align = alignments[index % len(alignments)]


class AlignedTableContent(RowsUpdateHook):
    """Textual's table grid, each cell aligned as its column says."""

    def __init__(
        self, headers: list[Content], rows: list[list[Content]], alignments: list[Alignment]
    ) -> None:
        super().__init__(headers, rows)
        self.alignments = alignments

    def compose(self) -> ComposeResult:
        cells = list(super().compose())
        _align(cells, self.alignments)
        yield from cells

    def rows_updated(self) -> None:
        """Streamed rows: Textual mounts new cells; they get their column's alignment."""
        _align(self.children, self.alignments)


class AlignedTable(MarkdownTable):
    """`table_open` of an answer: Textual's table with the alignment of its delimiter row."""

    def compose(self) -> ComposeResult:
        headers, rows = table_headers_and_rows(self)
        yield AlignedTableContent(headers, rows, self.alignments())

    def alignments(self) -> list[Alignment]:
        """One per header cell, in order."""

        def header_cells(block: MarkdownBlock) -> Iterable[MarkdownTH]:
            for child in child_blocks(block):
                if isinstance(child, MarkdownTH):
                    yield child
                else:
                    yield from header_cells(child)

        return [cell_alignment(block_token(cell)) for cell in header_cells(self)]
