"""Lists and tables of thousands of lines in an answer, each drawn by one widget that renders
only the lines on screen.

Textual's Markdown builds a widget for every list item (and its paragraph) or table cell
before anything is mounted: a 5,000-item answer took 10 s and 350 MB to show. Rules added to
the answer's markdown-it parser fold a long list whose items are each one paragraph, and a long
table, into one `long_list` or `long_table` token; the answer turns it into `ListLines` or
`TableLines` (through Markdown's public `unhandled_token` hook), which lay the lines out once
per width and render each when it first comes on screen. Short lists and tables keep their
usual widgets (compact_lists.py, aligned_table.py). Both honour a column's alignment.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import overload

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from textual.content import Content
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from mm_tui.widgets.fast_markdown.aligned_table import Alignment, cell_alignment, fit_cell
from mm_tui.widgets.fast_markdown.long_runs import (
    LONG_LIST,
    LONG_TABLE,
    MANY_ITEMS,
    RunParser,
    folded_token,
    list_symbols,
)
from mm_tui.widgets.line_selection import placed, selected_text, with_selection
from mm_tui.widgets.textual_private import token_converter

_ITEM = ("list_item_open", "paragraph_open", "inline", "paragraph_close", "list_item_close")
_RENDER_CHUNK = 64  # lines rendered at a time when they come on screen


def _simple_items(tokens: list[Token], start: int) -> tuple[list[Token], int] | None:
    """Each item's open and inline tokens, and the index of the list's close, if every item
    is one paragraph."""
    close = tokens[start].type.replace("_open", "_close")
    items: list[Token] = []
    at = start + 1
    while at + len(_ITEM) <= len(tokens) and tokens[at].type == "list_item_open":
        if tuple(token.type for token in tokens[at : at + len(_ITEM)]) != _ITEM:
            return None
        items += [tokens[at], tokens[at + 2]]
        at += len(_ITEM)
    if at >= len(tokens) or tokens[at].type != close:
        return None
    return items, at


def _table_rows(tokens: list[Token], start: int) -> tuple[list[list[Token]], list[Alignment], int]:
    """The inline tokens of each row (the header first), each column's alignment, and the
    index of `table_close`."""
    rows: list[list[Token]] = []
    alignments: list[Alignment] = []
    at = start + 1
    while at < len(tokens) and tokens[at].type != "table_close":
        token = tokens[at]
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "th_open":
            alignments.append(cell_alignment(token))
        elif token.type == "inline" and rows:
            rows[-1].append(token)
        at += 1
    return rows, alignments, at


def _fold_long_blocks(state: StateCore) -> None:
    """markdown-it core rule: a long simple list, or a long table, becomes one token."""
    tokens, kept = state.tokens, []
    depth = 0  # unordered items around this point: the bullet Textual would draw
    open_items: list[bool] = []
    at = 0
    while at < len(tokens):
        token = tokens[at]
        if token.type in ("bullet_list_open", "ordered_list_open"):
            found = _simple_items(tokens, at)
            if found is not None and len(found[0]) // 2 >= MANY_ITEMS:
                items, at = found
                bullet = Markdown.BULLETS[depth % len(Markdown.BULLETS)]
                ordered = token.type == "ordered_list_open"
                symbols = list_symbols(items[0::2], ordered, bullet)
                kept.append(
                    folded_token(LONG_LIST, token, {"symbols": symbols, "inlines": items[1::2]})
                )
                at += 1
                continue
        elif token.type == "table_open":
            rows, alignments, close = _table_rows(tokens, at)
            if len(rows) > MANY_ITEMS:
                meta: dict[str, object] = {"rows": rows, "alignments": alignments}
                kept.append(folded_token(LONG_TABLE, token, meta))
                at = close + 1
                continue
        elif token.type == "list_item_open":
            open_items.append(not token.info)
            depth += not token.info
        elif token.type == "list_item_close" and open_items:
            depth -= open_items.pop()
        kept.append(token)
        at += 1
    state.tokens = kept


def answer_parser() -> MarkdownIt:
    """Textual's parser (gfm-like) with long lists and tables folded into one token each
    (long plain runs parsed apart: long_runs.py)."""
    parser = RunParser("gfm-like")
    parser.core.ruler.push("fold_long_blocks", _fold_long_blocks)
    return parser


class LazyLines(Sequence[Content]):
    """A block's lines at one width, each entry's (an item's, a row's) built when first asked
    for: a 5,000-row table laid out whole took 0.3 s per width, and only a screen of it shows."""

    def __init__(self, counts: Iterable[int], build: Callable[[int], list[Content]]) -> None:
        """`counts`: how many lines each entry takes; `build(n)`: entry n's lines."""
        self._starts = list(accumulate(counts, initial=0))
        self._build = build
        self._built: dict[int, list[Content]] = {}

    def __len__(self) -> int:
        return self._starts[-1]

    def _line(self, y: int) -> Content:
        entry = bisect_right(self._starts, y) - 1
        lines = self._built.get(entry)
        if lines is None:
            lines = self._built[entry] = self._build(entry)
        return lines[y - self._starts[entry]]

    @overload
    def __getitem__(self, index: int) -> Content: ...
    @overload
    def __getitem__(self, index: slice) -> list[Content]: ...
    def __getitem__(self, index: int | slice) -> Content | list[Content]:
        if isinstance(index, slice):
            return [self._line(y) for y in range(*index.indices(len(self)))]
        y = index + len(self) if index < 0 else index
        if not 0 <= y < len(self):
            raise IndexError(index)
        return self._line(y)


def _wrapped(text: Content, room: int) -> list[Content]:
    """`text` wrapped to `room` cells (a line that fits is itself: Content.wrap gives it back
    unchanged, at a cost that adds up over thousands of items)."""
    if text.cell_length <= room and "\t" not in text.plain and "\n" not in text.plain:
        return [text]
    return text.wrap(room) or [Content("")]


def list_lines(items: list[tuple[str, Content]], width: int) -> list[Content]:
    """`• text` for each (symbol, text), the wrapped lines of each item under its text."""
    lines: list[Content] = []
    for symbol, text in items:
        wrapped = _wrapped(text, max(1, width - len(symbol)))
        lines.append(Content.styled(symbol, "$text-primary") + wrapped[0])
        lines.extend(Content(" " * len(symbol)) + line for line in wrapped[1:])
    return lines


def list_layout(items: list[tuple[str, Content]], width: int) -> LazyLines:
    """`list_lines`, each item's lines built when first shown."""
    counts = [len(_wrapped(text, max(1, width - len(symbol)))) for symbol, text in items]
    return LazyLines(counts, lambda n: list_lines(items[n : n + 1], width))


def table_layout(
    rows: list[list[Content]], width: int, alignments: Sequence[Alignment] = ()
) -> LazyLines:
    """The header row in bold, a rule, one line per row, the widest column cut first, each
    cell aligned as its column's separator says; each line built when first shown."""
    columns = max(len(row) for row in rows)
    widths = [max((row[n].cell_length for row in rows if n < len(row)), default=0)
              for n in range(columns)]  # fmt: skip
    room = max(columns, width - 3 * (columns - 1))
    while sum(widths) > room:  # the widest column gives way first
        widest = widths.index(max(widths))
        widths[widest] -= 1
    separator = Content.styled(" │ ", "$text-muted")

    def line(cells: list[Content]) -> Content:
        padded = [
            fit_cell(
                cells[n] if n < len(cells) else Content(""),
                size,
                alignments[n] if n < len(alignments) else "left",
            )
            for n, size in enumerate(widths)
        ]
        return separator.join(padded)

    def build(n: int) -> list[Content]:
        if n == 0:
            return [line(rows[0]).stylize("bold")]
        if n == 1:
            return [Content.styled("─┼─".join("─" * size for size in widths), "$text-muted")]
        return [line(rows[n - 1])]

    return LazyLines([1] * (len(rows) + 1), build)


def table_lines(
    rows: list[list[Content]], width: int, alignments: Sequence[Alignment] = ()
) -> list[Content]:
    """`table_layout`'s every line."""
    return list(table_layout(rows, width, alignments))


_SPACES = re.compile(r"\s+")


def inline_content(block: MarkdownBlock, token: Token) -> Content:
    """Textual's Content of an inline token; a lone run of text is made at once (Textual's
    conversion, per token, cost 0.1 s over a 5,000-row table's cells)."""
    children = token.children
    if children is not None and len(children) == 1 and children[0].type == "text":
        return Content(_SPACES.sub(" ", children[0].content))  # as MarkdownBlock does it
    return token_converter(block)(token)


class LineBlock(MarkdownBlock):
    """A block laid out once per width as lines, each rendered when it first shows."""

    DEFAULT_CSS = """
    LineBlock {
        width: 1fr;
        height: auto;
        margin: 0 1 1 0;
    }
    """

    def __init__(self, markdown: Markdown, token: Token) -> None:
        super().__init__(markdown, token)
        self._lines: Sequence[Content] = []
        self._laid_out_at = -1
        self._strips: dict[int, Strip] = {}

    def lay_out(self, width: int) -> Sequence[Content]:
        """The block's lines at `width`."""
        raise NotImplementedError

    def _layout(self, width: int) -> Sequence[Content]:
        if width != self._laid_out_at:
            self._lines, self._laid_out_at = self.lay_out(width), width
            self._strips.clear()
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._layout(width)) if width else 0

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a new theme: new colours

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width or self.size.width
        lines = self._layout(width)
        if y not in self._strips:
            if not 0 <= y < len(lines):
                return Strip.blank(width, self.visual_style.rich_style)
            first = y - y % _RENDER_CHUNK
            chunk = with_selection(self, lines[first : first + _RENDER_CHUNK], first)
            strips = Visual.to_strips(
                self, Content("\n").join(chunk), width, len(chunk), self.visual_style,
                apply_selection=False,
            )  # fmt: skip
            self._strips.update(
                (first + n, placed(strip, first + n)) for n, strip in enumerate(strips)
            )
        return self._strips[y]

    # -- text selection (line_selection.py) ---------------------------------------------

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self._lines, selection), "\n"


class ListLines(LineBlock):
    """Every item of a long simple list: `• text` with its wrapped lines under the text."""

    def __init__(self, markdown: Markdown, token: Token) -> None:
        super().__init__(markdown, token)
        inlines: list[Token] = token.meta["inlines"]
        contents = [inline_content(self, inline) for inline in inlines]
        self.items = list(zip(token.meta["symbols"], contents, strict=True))

    def lay_out(self, width: int) -> Sequence[Content]:
        return list_layout(self.items, width)


class TableLines(LineBlock):
    """A long table: the header in bold, a rule, one line per row, columns cut to fit."""

    def __init__(self, markdown: Markdown, token: Token) -> None:
        super().__init__(markdown, token)
        rows: list[list[Token]] = token.meta["rows"]
        self.rows = [[inline_content(self, cell) for cell in row] for row in rows]
        self.alignments: list[Alignment] = token.meta.get("alignments", [])

    def lay_out(self, width: int) -> Sequence[Content]:
        return table_layout(self.rows, width, self.alignments)


def long_block(markdown: Markdown, token: Token) -> LineBlock | None:
    """The answer's `unhandled_token`: a folded token becomes its widget."""
    if token.type == LONG_LIST:
        return ListLines(markdown, token)
    if token.type == LONG_TABLE:
        return TableLines(markdown, token)
    return None
