"""Long runs of list items or table rows parsed without markdown-it's block and inline passes.

A 5,000-item answer spent most of its time to screen in markdown-it (pure Python): 0.3 s for
the list, 0.6 s for the table on this project's 2-core machine. Most such runs are
plain: one line per item (`- text`, `12. text`) or per row (`| a | b |`). Here each run of at
least `MANY_ITEMS` lines is cut out of the source and a one-line stand-in of the same kind is
parsed in its place (`- <marker>`, or a table row `| <marker> |` under the run's own header),
so markdown-it itself says where the run sits: if the stand-in comes back as a list of one item
(or a table body of one row) at the top level, the run would have been that list (that table)
of its lines, and its `long_list` / `long_table` token is built here from the lines; every item
or cell whose text holds no character that inline Markdown acts on becomes a text token at once,
the others go through markdown-it's inline parser. Anything else (the stand-in merged into a
list above, continued by a lazy line, inside a fence...) parses the whole source as before. The
tokens are the ones the full parse folds (`long_blocks._fold_long_blocks`), line maps included;
tests/window/test_long_runs.py compares both on many sources.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import MutableMapping
from dataclasses import dataclass, field
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.common.utils import mdTrim
from markdown_it.token import Token
from textual.widgets import Markdown

from mm_tui.widgets.fast_markdown.aligned_table import cell_alignment

#: From this many items (or table rows) on, a list or table is folded into one token.
MANY_ITEMS = 64
LONG_LIST = "long_list"
LONG_TABLE = "long_table"

_BULLET_ITEM = re.compile(r"([-+*]) (\S.*)\Z")
_ORDERED_ITEM = re.compile(r"(\d{1,9})([.)]) (\S.*)\Z")
# An item's text that would open a block inside the item (CommonMark): a heading, a quote, a
# fence, HTML or a link definition, a nested list, a thematic break.
_OPENS_BLOCK = re.compile(
    r"#{1,6}(?:[ \t]|\Z)|>|```|~~~|<|\[|[-+*](?:[ \t]|\Z)|\d{1,9}[.)](?:[ \t]|\Z)"
    r"|([-*_])[ \t]*(?:\1[ \t]*){2,}\Z"
)
_TABLE_ROW = re.compile(r"\|[^\\]*\Z")  # a body row: no escaped pipe, no leading space
_DELIMITER_ROW = re.compile(r"[ \t]*[-:|][-:| \t]*\Z")
# Characters an inline rule of markdown-it acts on (escape, code, emphasis, strikethrough,
# links, images, autolinks and HTML, entities); linkify is asked apart.
_INLINE_MARKUP = re.compile(r"[\\`*_~\[\]!<&]")
# markdown-it's table rule stops adding cells after this many were made up (rows too short).
_MAX_AUTOCOMPLETED_CELLS = 0x10000


def list_symbols(items: list[Token], ordered: bool, bullet: str) -> list[str]:
    """Each item's bullet or number, as Textual's Markdown draws them."""
    if not ordered:
        return [bullet] * len(items)
    try:
        first = int(items[0].info)
    except ValueError:
        first = 1
    numbers = range(first, first + len(items))
    width = max(len(f"{number}. ") for number in numbers)
    return [f"{number}. ".rjust(width + 1) for number in numbers]


def folded_token(kind: str, token: Token, meta: dict[str, object]) -> Token:
    """A `long_list` / `long_table` token in place of the block `token` opens."""
    folded = Token(kind, token.tag, 0, map=token.map, level=token.level)
    folded.meta = meta
    return folded


@dataclass
class _Run:
    """Lines `start` to `end` (excluded) of the source: list items, or a table's body rows."""

    kind: str  # LONG_LIST or LONG_TABLE
    start: int
    end: int
    texts: list[str] = field(default_factory=list)  # an item's text, or a row's line
    marker: str = ""  # the stand-in's first line: `- `, `3. `, or the row `| `
    at: int = 0  # the stand-in's line in the shortened source


def _item(line: str) -> tuple[str, str] | None:
    """(the marker that must stay the same through the list, the item's text)."""
    if match := _BULLET_ITEM.match(line):
        marker, text = match.group(1), match.group(2)
    elif match := _ORDERED_ITEM.match(line):
        marker, text = match.group(2), match.group(3)
    else:
        return None
    if _OPENS_BLOCK.match(text):
        return None
    return marker, text


def _list_runs(lines: list[str]) -> list[_Run]:
    runs: list[_Run] = []
    at = 0
    while at < len(lines):
        first = _item(lines[at])
        if first is None:
            at += 1
            continue
        end = at + 1
        texts = [first[1]]
        while end < len(lines) and (item := _item(lines[end])) is not None:
            if item[0] != first[0]:
                break
            texts.append(item[1])
            end += 1
        if len(texts) >= MANY_ITEMS:
            head = lines[at][: len(lines[at]) - len(texts[0])]  # `- ` or `12. `
            # A paragraph's content is its lines stripped (markdown-it's paragraph rule).
            runs.append(_Run(LONG_LIST, at, end, [text.strip() for text in texts], head))
        at = end
    return runs


def _table_runs(lines: list[str]) -> list[_Run]:
    """Body rows right under a header and its delimiter row."""
    runs: list[_Run] = []
    at = 1
    while at < len(lines) - 1:
        if not (_DELIMITER_ROW.match(lines[at]) and "|" in lines[at - 1]):
            at += 1
            continue
        end = at + 1
        while end < len(lines) and _TABLE_ROW.match(lines[end]):
            end += 1
        if end - (at + 1) >= MANY_ITEMS:
            runs.append(_Run(LONG_TABLE, at + 1, end, lines[at + 1 : end], "| "))
        at = end
    return runs


class RunParser(MarkdownIt):
    """markdown-it with long plain runs of list items and table rows parsed apart.

    A streaming answer is parsed again, whole from its open block, each time it is drawn: a
    list of thousands of items parsed each item's inline Markdown again every time (a second
    per draw at 5,000 items). The inline token of an item or cell, by its text and line, is
    kept from one parse to the next (the same object: the answer's drawing keeps its lines
    by it too), so a growing run costs what it gained; only the last parse's are kept."""

    def __init__(self, config: str = "gfm-like") -> None:
        super().__init__(config)
        self._stand_in = f"mmlongrun{uuid.uuid4().hex}"
        self._inlines: dict[tuple[str, int], Token] = {}  # the last parse's
        self._kept: dict[tuple[str, int], Token] = {}  # this parse's

    def parse(self, src: str, env: MutableMapping[str, Any] | None = None) -> list[Token]:
        self._kept = {}
        try:
            return self._parse(src, {} if env is None else env)
        finally:
            self._inlines, self._kept = self._kept, {}

    def _parse(self, src: str, env: MutableMapping[str, Any]) -> list[Token]:
        if "\r" in src or "\0" in src:  # left to markdown-it's normalisation
            return super().parse(src, env)
        lines = src.split("\n")
        runs = sorted(_list_runs(lines) + _table_runs(lines), key=lambda run: run.start)
        if not runs:
            return super().parse(src, env)
        kept: list[str] = []
        done = 0
        for run in runs:
            kept += lines[done : run.start]
            run.at = len(kept)
            kept.append(run.marker + self._stand_in + (" |" if run.kind == LONG_TABLE else ""))
            done = run.end
        kept += lines[done:]
        short_env: dict[str, Any] = dict(env)
        tokens = super().parse("\n".join(kept), short_env)
        folded = self._fold(tokens, runs, short_env)
        if folded is None:
            return super().parse(src, env)
        env.update(short_env)
        return folded

    # -- the stand-ins back as the runs' tokens ------------------------------------------

    def _fold(
        self, tokens: list[Token], runs: list[_Run], env: dict[str, Any]
    ) -> list[Token] | None:
        stand_ins = [n for n, token in enumerate(tokens) if token.type == "inline"
                     and token.content == self._stand_in]  # fmt: skip
        if len(stand_ins) != len(runs):
            return None
        out: list[Token] = []
        done = 0
        for run, at in zip(runs, stand_ins, strict=True):
            if run.kind == LONG_LIST:
                span = self._list_at(tokens, at)
                if span is None:
                    return None
                first, last = span
                out += tokens[done:first]
                out.append(self._long_list(tokens[first], tokens[first + 1], run, env))
            else:
                span = self._table_at(tokens, at)
                if span is None:
                    return None
                first, last = span
                folded = self._long_table(tokens[first:at], run, env)
                if folded is None:
                    return None
                out += tokens[done:first]
                out.append(folded)
            done = last + 1
        out += tokens[done:]
        _shift_maps(out, runs)
        return out

    @staticmethod
    def _list_at(tokens: list[Token], at: int) -> tuple[int, int] | None:
        """The stand-in is the only item of a top-level list: its first and last token."""
        first, last = at - 3, at + 3
        if first < 0 or last >= len(tokens):
            return None
        kinds = [token.type for token in tokens[first : last + 1]]
        opened = kinds[0]
        if opened not in ("bullet_list_open", "ordered_list_open") or tokens[first].level:
            return None
        expected = [opened, "list_item_open", "paragraph_open", "inline",
                    "paragraph_close", "list_item_close", opened.replace("_open", "_close")]  # fmt: skip
        return (first, last) if kinds == expected else None

    @staticmethod
    def _table_at(tokens: list[Token], at: int) -> tuple[int, int] | None:
        """The stand-in is the only row of a top-level table's body: `table_open` and
        `table_close`."""
        if at < 3 or [t.type for t in tokens[at - 3 : at]] != ["tbody_open", "tr_open", "td_open"]:
            return None
        first = at
        while first >= 0 and tokens[first].type != "table_open":
            first -= 1
        if first < 0 or tokens[first].level:
            return None
        last = at + 1
        while last < len(tokens) and tokens[last].type != "tr_close":
            last += 1
        if tokens[last + 1 : last + 3] and [t.type for t in tokens[last + 1 : last + 3]] == [
            "tbody_close",
            "table_close",
        ]:
            return first, last + 2
        return None

    def _inline(self, text: str, line: int, env: dict[str, Any]) -> Token:
        """The inline token markdown-it makes of a one-line paragraph or cell `text` (the
        last parse's when it had the same text on the same line)."""
        key = (text, line)
        token = self._inlines.get(key)
        if token is None:
            token = self._parsed_inline(text, line, env)
        self._kept[key] = token
        return token

    def _parsed_inline(self, text: str, line: int, env: dict[str, Any]) -> Token:
        linkify = self.linkify if self.options["linkify"] else None
        if _INLINE_MARKUP.search(text) or (linkify is not None and linkify.test(text)):
            token = self.parseInline(text, env)[0]
        else:
            token = Token("inline", "", 0, content=text, children=[])
            if text:
                assert token.children is not None
                token.children.append(Token("text", "", 0, content=text))
        token.map = [line, line + 1]
        return token

    def _long_list(self, opened: Token, item: Token, run: _Run, env: dict[str, Any]) -> Token:
        ordered = opened.type == "ordered_list_open"
        inlines = [self._inline(text, run.start + n, env) for n, text in enumerate(run.texts)]
        symbols = list_symbols([item] * len(inlines), ordered, Markdown.BULLETS[0])
        return folded_token(LONG_LIST, opened, {"symbols": symbols, "inlines": inlines})

    def _long_table(self, head: list[Token], run: _Run, env: dict[str, Any]) -> Token | None:
        """`head`: `table_open` to the stand-in's `td_open`; the header's cells are kept."""
        alignments = [cell_alignment(token) for token in head if token.type == "th_open"]
        header = [token for token in head if token.type == "inline"]
        columns = len(header)
        rows = [header]
        made_up = 0
        for n, line in enumerate(run.texts):
            cells = mdTrim(line).split("|")
            if cells and cells[0] == "":
                cells.pop(0)
            if cells and cells[-1] == "":
                cells.pop()
            made_up += columns - len(cells)
            if made_up > _MAX_AUTOCOMPLETED_CELLS:
                return None  # markdown-it's table ends here: left to the full parse
            texts = [mdTrim(cell) if cell else "" for cell in cells[:columns]]
            texts += [""] * (columns - len(texts))
            rows.append([self._inline(text, run.start + n, env) for text in texts])
        meta: dict[str, object] = {"rows": rows, "alignments": alignments}
        return folded_token(LONG_TABLE, head[0], meta)


def _shift_maps(tokens: list[Token], runs: list[_Run]) -> None:
    """Line maps back in the whole source: each stand-in line was a run of lines."""
    grown = [(run.at, run.end - run.start - 1) for run in runs]

    def shifted(line: int) -> int:
        return line + sum(more for at, more in grown if at < line)

    for token in tokens:
        if token.map is not None:
            token.map = [shifted(token.map[0]), shifted(token.map[1])]
