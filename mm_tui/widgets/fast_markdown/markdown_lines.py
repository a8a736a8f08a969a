"""Markdown drawn as lines of `Content`, laid out the way Textual's Markdown widget lays it out.

The streaming answer (answer_stream.py) draws itself from these lines instead of mounting a
widget per block: Textual lays out and repaints every mounted block on each change, which cost
the model's machine ~6 CPU-seconds per 1,000 streamed tokens (measured). Each function mirrors
one block of `textual.widgets._markdown` (Textual pinned exactly in pyproject): its margins,
padding, bullets and colours, so an answer looks the same while it streams and once finished;
`tests/window/test_answer_stream.py` compares both renders line by line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from markdown_it.token import Token
from textual.color import Color
from textual.content import Content
from textual.style import Style
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownFence

from mm_tui.widgets.fast_markdown.long_blocks import LONG_LIST, LONG_TABLE, list_lines, table_lines

Inline = Callable[[Token], Content]


@dataclass
class Drawn:
    """One block's lines, and the margins Textual keeps above and below it (collapsed with
    its neighbours' margins, as a vertical layout does)."""

    lines: list[Content] = field(default_factory=list)
    top: int = 0
    bottom: int = 0


@dataclass(frozen=True)
class Palette:
    """The colours of the blocks, resolved once per theme (CSS variables and blends)."""

    headings: dict[int, Style]
    fence: Style
    fence_text: Style
    quote: Style
    quote_border: Style
    rule: Style
    ansi: bool
    dark: bool

    @classmethod
    def of(cls, variables: dict[str, str], background: Color, ansi: bool, dark: bool) -> Palette:
        """`background`: the colour under the answer; blocks with a translucent background
        (a fence's `black 10%`, a quote's `$boost`) are blended over it, as Textual does."""

        def color(name: str) -> Color:
            return Color.parse(variables[name])

        def heading(level: int) -> Style:
            # A text style of `none` (ANSI themes' h3 and h5) is CSS for no style, not a colour.
            text_style = variables[f"markdown-h{level}-text-style"].split()
            words = [word for word in text_style if word != "none"]
            return Style.parse(" ".join([*words, variables[f"markdown-h{level}-color"]]))

        headings = {level: heading(level) for level in range(1, 7)}
        fence_bg = background + (Color(0, 0, 0, 0.1) if dark else Color(255, 255, 255, 0.3))
        boost = background + color("boost")
        # MarkdownBlockQuote: `border-left: outer $text-primary 50%` over the quote's $boost
        # ($text-secondary in light themes); an ANSI colour is drawn as itself (a terminal's
        # palette entry does not blend).
        border = color("text-primary" if dark else "text-secondary")
        if border.ansi is None:
            border = background + (border.with_alpha(0.5) if dark else border)
        return cls(
            headings=headings,
            fence=Style(background=None if ansi else fence_bg),
            fence_text=Style(foreground=Color(210, 210, 210)),
            quote=Style(background=boost),
            quote_border=Style(foreground=border, background=boost),
            rule=Style(foreground=color("secondary")),
            ansi=ansi,
            dark=dark,
        )


def top_level_blocks(tokens: list[Token]) -> Iterator[tuple[int, int]]:
    """(first, last) token index of each block at the outermost level."""
    yield from _blocks(tokens, 0, len(tokens))


def _blocks(tokens: list[Token], start: int, end: int) -> Iterator[tuple[int, int]]:
    at = start
    while at < end:
        if tokens[at].nesting == 1:
            depth, close = 1, at
            while depth and close + 1 < end:
                close += 1
                depth += tokens[close].nesting
            yield at, close
            at = close + 1
        else:
            yield at, at
            at += 1


def stack(drawn: list[Drawn]) -> Drawn:
    """Blocks one under the other, each gap the larger of the two margins around it."""
    drawn = [block for block in drawn if block.lines]
    if not drawn:
        return Drawn()
    lines: list[Content] = []
    for before, block in zip([None, *drawn[:-1]], drawn, strict=True):
        if before is not None:
            lines.extend(Content("") for _ in range(max(before.bottom, block.top)))
        lines.extend(block.lines)
    return Drawn(lines, drawn[0].top, drawn[-1].bottom)


def flatten(block: Drawn) -> list[Content]:
    """The block's lines with its own margins drawn as blank lines."""
    blank = [Content("")]
    return blank * block.top + block.lines + blank * block.bottom


@dataclass
class Context:
    """Where a block sits: Textual styles paragraphs and lists by their parents."""

    top_level: bool = True  # a direct child of the Markdown widget
    in_list: bool = False  # inside a list (a nested list has no margin)
    bullets: int = 0  # unordered list items around this point: which bullet to draw


class LineRenderer:
    """Turns markdown-it tokens into lines at a width; one per answer, made per theme.

    A long list's items are drawn once: an item whose inline token is the one drawn before
    (the answer's parser keeps them, long_runs.RunParser) keeps its lines, so a list of
    thousands of items growing at its end costs each draw its new items only."""

    def __init__(self, inline: Inline, palette: Palette) -> None:
        self.inline = inline
        self.palette = palette
        # By the inline token's id, with the token (kept alive, so its id is its own): the
        # last long list's items, drawn (symbol, width, lines).
        self._items: dict[int, tuple[Token, str, int, list[Content]]] = {}

    def block(self, tokens: list[Token], first: int, last: int, width: int,
              where: Context | None = None) -> Drawn:  # fmt: skip
        """The block spanning `tokens[first:last + 1]`, drawn `width` cells wide."""
        where = where or Context()
        width = max(1, width)
        kind = tokens[first].type
        if kind == "paragraph_open":
            lines = self.inline(tokens[first + 1]).wrap(width) or [Content("")]
            return Drawn(lines, 0, 1 if where.top_level else 0)
        if kind == "heading_open":
            return self._heading(tokens[first], tokens[first + 1], width)
        if kind in ("bullet_list_open", "ordered_list_open"):
            return self._list(tokens, first, last, width, where)
        if kind in ("fence", "code_block"):
            return self._fence(tokens[first], width)
        if kind == "blockquote_open":
            return self._quote(tokens, first, last, width, where)
        if kind == "hr":
            return Drawn([Content(""), Content.styled("─" * width, self.palette.rule)], 0, 1)
        if kind == "table_open":
            return self._table(tokens, first, last, width)
        if kind == LONG_LIST:
            return Drawn(self._long_list(tokens[first], width - 1), 0, 1)
        if kind == LONG_TABLE:
            meta = tokens[first].meta
            rows = [[self.inline(cell) for cell in row] for row in meta["rows"]]
            return Drawn(table_lines(rows, width - 1, meta.get("alignments", [])), 0, 1)
        return Drawn()  # html and the like: Textual's Markdown does not show them either

    def blocks(self, tokens: list[Token], start: int, end: int, width: int,
               where: Context) -> Drawn:  # fmt: skip
        """The blocks of `tokens[start:end]`, stacked."""
        return stack(
            [self.block(tokens, a, b, width, where) for a, b in _blocks(tokens, start, end)]
        )

    def _long_list(self, token: Token, width: int) -> list[Content]:
        """Each item's lines, those of an item drawn last time (same token, symbol and
        width) kept."""
        symbols: list[str] = token.meta["symbols"]
        drawn, self._items = self._items, {}
        lines: list[Content] = []
        for symbol, inline in zip(symbols, token.meta["inlines"], strict=True):
            known = drawn.get(id(inline))
            if known is None or known[0] is not inline or known[1:3] != (symbol, width):
                item = list_lines([(symbol, self.inline(inline))], width)
                known = (inline, symbol, width, item)
            self._items[id(inline)] = known
            lines += known[3]
        return lines

    def _heading(self, token: Token, inline: Token, width: int) -> Drawn:
        level = int(token.tag[1:])
        text = self.inline(inline).stylize_before(self.palette.headings[level])
        lines = text.wrap(width) or [Content("")]
        if level == 1:  # MarkdownH1: content-align center
            lines = [line.center(width) for line in lines]
        return Drawn(lines, 2 if level <= 2 else 1, 1)

    def _list(self, tokens: list[Token], first: int, last: int, width: int,
              where: Context) -> Drawn:  # fmt: skip
        ordered = tokens[first].type == "ordered_list_open"
        items = list(_blocks(tokens, first + 1, last))
        symbols: list[str]
        if ordered:
            try:
                start = int(tokens[first + 1].info)
            except ValueError:
                start = 1
            numbers = range(start, start + len(items))
            size = max((len(f"{number}. ") for number in numbers), default=3)
            symbols = [f"{number}. ".rjust(size + 1) for number in numbers]
        else:
            symbols = [Markdown.BULLETS[where.bullets % len(Markdown.BULLETS)]] * len(items)
        inner = Context(top_level=False, in_list=True, bullets=where.bullets + (not ordered))
        lines: list[Content] = []
        for (a, b), symbol in zip(items, symbols, strict=True):
            # compact_lists.py draws an item of one paragraph as one widget (margin-right 1);
            # any other item is Textual's row of the bullet and a column of its blocks.
            simple = b - a == 4 and tokens[a + 1].type == "paragraph_open"
            room = width - len(symbol) - (1 if simple else 0)
            body = flatten(self.blocks(tokens, a + 1, b, room, inner)) or [Content("")]
            # compact_lists.py's bullet is $text-primary; Textual's MarkdownBullet is
            # $text-secondary in light themes.
            colour = "$text-primary" if simple or self.palette.dark else "$text-secondary"
            bullet = Content.styled(symbol, colour)
            lines.append(bullet + body[0])
            lines.extend(Content(" " * len(symbol)) + line for line in body[1:])
        return Drawn(lines, 0, 0 if where.in_list else 1)

    def _fence(self, token: Token, width: int) -> Drawn:
        palette = self.palette
        code = MarkdownFence.highlight(
            token.content.rstrip(), token.info, ansi=palette.ansi, dark=palette.dark
        )
        left = 0 if palette.ansi else 2  # MarkdownFence > Label { padding: 1 2 }
        rows = [
            (Content(" " * left) + line.stylize_before(palette.fence_text)).truncate(
                width, pad=True
            )
            for line in code.split("\n", allow_blank=True)
        ]
        blank = Content(" " * width)
        lines = [line.stylize_before(palette.fence) for line in (blank, *rows, blank)]
        margin = 0 if palette.ansi else 1
        return Drawn(lines, margin, margin)

    def _quote(self, tokens: list[Token], first: int, last: int, width: int,
               where: Context) -> Drawn:  # fmt: skip
        # MarkdownBlockQuote: border-left outer (a half block), padding 0 1, background $boost.
        inner = Context(top_level=False, in_list=where.in_list, bullets=where.bullets)
        body = flatten(self.blocks(tokens, first + 1, last, width - 3, inner)) or [Content("")]
        border = Content.styled("▌", self.palette.quote_border)
        lines = [
            border
            + (Content(" ") + line).truncate(width - 1, pad=True).stylize_before(self.palette.quote)
            for line in body
        ]
        return Drawn(lines, 1, 1)

    def _table(self, tokens: list[Token], first: int, last: int, width: int) -> Drawn:
        """A table while it streams: the long table's lines (Textual's grid once finished)."""
        rows: list[list[Content]] = []
        for token in tokens[first:last]:
            if token.type == "tr_open":
                rows.append([])
            elif token.type == "inline" and rows:
                rows[-1].append(self.inline(token))
        return Drawn(table_lines(rows, width), 0, 1) if rows else Drawn()


#: Blocks drawn here only approximately, or by a widget of their own once finished (tables:
#: aligned_table.py, long_blocks.TableLines): a stream holding one ends as Textual's Markdown.
APPROXIMATE = frozenset({"table_open", LONG_TABLE})


class IncrementalLines:
    """Markdown appended piece by piece, laid out as lines at one width.

    Blocks followed by another block can no longer change: they are drawn once and kept
    (`settled`); only the open last block is parsed and drawn again on each `extend`.
    """

    def __init__(self, parse: Callable[[str], list[Token]], renderer: LineRenderer,
                 width: int) -> None:  # fmt: skip
        self.parse = parse
        self.renderer = renderer
        self.width = width
        self.palette = renderer.palette
        self.text = ""
        #: False once a block was drawn only approximately (`APPROXIMATE`).
        self.exact = True
        self.lines: list[Content] = []
        #: The first lines that can no longer change.
        self.settled = 0
        self._settled_at = 0  # where in `text` the open blocks begin
        self._settled = Drawn()

    def extend(self, text: str) -> None:
        """Append Markdown; parse and draw from the first open block on."""
        self.text += text
        tail = self.text[self._settled_at :]
        tokens = self.parse(tail)
        spans = list(top_level_blocks(tokens))
        if any(tokens[first].type in APPROXIMATE for first, _ in spans):
            self.exact = False
        drawn = [self.renderer.block(tokens, a, b, self.width) for a, b in spans]
        last_start = tokens[spans[-1][0]].map if len(spans) > 1 else None
        if last_start is not None:  # the blocks above the last one are complete
            self._settled = stack([self._settled, *drawn[:-1]])
            closed = tail.splitlines(keepends=True)[: last_start[0]]
            self._settled_at += sum(len(line) for line in closed)
            drawn = drawn[-1:]
        settled = self._settled
        self.settled = settled.top + len(settled.lines) if settled.lines else 0
        self.lines = flatten(stack([settled, stack(drawn)]))
