"""Long runs of list items and table rows parsed apart (long_runs.py) give exactly the tokens the
full markdown-it parse folds: the same blocks, line maps, bullets and numbers, and the
same inline tokens in every item and cell, whatever surrounds the run. Sources where the run is
not what it looks like (merged into a list above, continued by a lazy line, inside a fence or a
quote) must come out as the full parse says too. Nothing here is timed (bench/ is)."""

from __future__ import annotations

import random
from functools import partial
from types import SimpleNamespace
from typing import Any, cast

import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.content import Content
from textual.widgets.markdown import MarkdownBlock

from mm_tui.widgets.fast_markdown.long_blocks import (
    _fold_long_blocks,
    answer_parser,
    inline_content,
    list_layout,
    list_lines,
)
from mm_tui.widgets.fast_markdown.long_runs import LONG_LIST, LONG_TABLE, MANY_ITEMS

TEXTS = [
    "item {n}: the case number {n} passed",
    "**bold {n}** then plain",
    "`code {n}` and a_b_c",
    "a [link](https://example.com/{n}) here",
    "see https://example.com/{n} or www.example.org",
    "example.com is a bare domain {n}",
    "an entity &amp; {n} &copy;",
    "~~struck {n}~~ text",
    "inline <b>html {n}</b>",
    r"escaped \* star {n}",
    "日本語のテキスト {n} 🙂",
    "trailing spaces {n}   ",
    "a [ref][r] link {n}",
    "colon: {n} and #hash and 3. not a list",
    "*emphasis {n}* first",
    "x|y {n}",
    "plain words {n}",
    "plain words {n}",
    "plain words {n}",
]
#: Item texts that open a block inside the item: the run cannot be taken apart past them.
BREAKERS = [
    "1986. A great year",
    "# a heading",
    "> a quote",
    "- nested",
    "--- ",
    "<div>",
    "[r]: /x",
]


def _reference() -> MarkdownIt:
    """The parse every answer had before long_runs.py: gfm-like, long blocks folded."""
    parser = MarkdownIt("gfm-like")
    parser.core.ruler.push("fold_long_blocks", _fold_long_blocks)
    return parser


def _inline(token: Token) -> Any:
    children = token.children or []
    return (token.content, [(c.type, c.tag, c.nesting, c.content, c.markup, c.info,
                             sorted(c.attrs.items())) for c in children])  # fmt: skip


def _dump(tokens: list[Token]) -> list[Any]:
    dumped: list[Any] = []
    for token in tokens:
        entry: list[Any] = [token.type, token.tag, token.nesting, token.level, token.map,
                            token.info, token.markup, sorted(token.attrs.items())]  # fmt: skip
        if token.type == "inline":
            entry.append(_inline(token))
        if token.type == LONG_LIST:
            entry += [token.meta["symbols"], [_inline(i) for i in token.meta["inlines"]]]
        if token.type == LONG_TABLE:
            rows = [[_inline(cell) for cell in row] for row in token.meta["rows"]]
            entry += [token.meta["alignments"], rows]
        dumped.append(entry)
    return dumped


def _items(rng: random.Random, count: int, marker: str) -> list[str]:
    lines = []
    broken = rng.randrange(count) if rng.random() < 0.25 else -1
    for n in range(count):
        head = marker if not marker[0].isdigit() else f"{n + int(marker[:-1])}{marker[-1]}"
        text = rng.choice(BREAKERS) if n == broken else rng.choice(TEXTS).format(n=n)
        lines.append(f"{head} {text}")
    return lines


def _table(rng: random.Random, rows: int) -> list[str]:
    lines = [
        "| # | name | status |",
        rng.choice(["|---|:--|--:|", "| :-: | --- | :- |", "---|---|---"]),
    ]
    escaped = rng.randrange(rows) if rng.random() < 0.25 else -1  # a row `\|` could split
    for n in range(rows):
        text = rng.choice([text for text in TEXTS if "\\" not in text]).format(n=n)
        cells = [str(n), r"a \| b" if n == escaped else text.replace("|", "/"), "passed"]
        cells = cells[: rng.choice([1, 2, 3, 3, 3, 3])] + (["extra"] if rng.random() < 0.1 else [])
        line = "| " + " | ".join(cells) + " |"
        lines.append(line if rng.random() > 0.05 else line.rstrip(" |"))
    return lines


def _document(rng: random.Random) -> str:
    parts: list[list[str]] = []
    for _ in range(rng.randint(1, 3)):
        count = rng.choice([MANY_ITEMS - 1, MANY_ITEMS, MANY_ITEMS + 5, 150])
        kind = rng.choice(["list", "list", "ordered", "table"])
        if kind == "table":
            block = _table(rng, count)
        else:
            marker = (
                rng.choice(["-", "*", "+"]) if kind == "list" else rng.choice(["1.", "7)", "0009."])
            )
            block = _items(rng, count, marker)
        before = rng.choice([[], ["Here is every case:"], ["Text.", ""], ["- an item above", ""],
                             ["- an item above"], ["```", "code"], ["> quoted", ""], ["[r]: /url", ""]])  # fmt: skip
        after = rng.choice([[], [""], ["", "After."], ["lazy continuation"], ["  indented"],
                            ["", "  indented paragraph"], ["```"], ["", "- another"]])  # fmt: skip
        parts.append(before + block + after)
    text = "\n".join(line for part in parts for line in [*part, ""])
    return text if rng.random() < 0.7 else text.rstrip("\n")


@pytest.mark.parametrize("seed", range(80))
def test_runs_parsed_apart_give_the_tokens_of_the_full_parse(seed: int) -> None:
    source = _document(random.Random(seed))
    assert _dump(answer_parser().parse(source)) == _dump(_reference().parse(source))


def test_the_answers_of_the_bench_and_edge_sources_give_the_same_tokens() -> None:
    sources = [
        "Here is every case:\n\n" + "".join(f"- item {n}: passed\n" for n in range(5000)),
        "Here is every case:\n\n| # | name | status |\n|---|---|---|\n"
        + "".join(f"| {n} | case number {n} | passed |\n" for n in range(1, 5001)),
        "".join(f"{n}. step {n}\n" for n in range(3, 300)),  # no newline before, start 3
        "Intro\n" + "".join(f"2. step {n}\n" for n in range(100)),  # cannot interrupt: not 1
        "> " + "".join(f"- quoted {n}\n" for n in range(100)),
        "".join(f"- a {n}\n" for n in range(100)) + "".join(f"* b {n}\n" for n in range(100)),
        "".join(f"- a {n}\n" for n in range(100))
        + "\n\n\n"
        + "".join(f"- b {n}\n" for n in range(100)),
    ]
    for source in sources:
        assert _dump(answer_parser().parse(source)) == _dump(_reference().parse(source))


def test_a_plain_long_list_and_table_never_go_to_markdown_it_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    parsed: list[int] = []
    full_parse = MarkdownIt.parse

    def parse(self: MarkdownIt, src: str, env: Any = None) -> list[Token]:
        parsed.append(len(src))
        return full_parse(self, src, env)

    monkeypatch.setattr(MarkdownIt, "parse", parse)
    listed = "Cases:\n\n" + "".join(f"- item {n}: **passed**\n" for n in range(5000))
    table = "| a | b |\n|---|---|\n" + "".join(f"| {n} | ok |\n" for n in range(5000))
    for source in (listed, table):
        parsed.clear()
        tokens = answer_parser().parse(source)
        assert [token.type for token in tokens if token.type.startswith("long_")]
        assert max(parsed) < 200  # the stand-in's source, not the 5,000 lines


def _reference_list_lines(items: list[tuple[str, Content]], width: int) -> list[Content]:
    """long_blocks.list_lines before lines that fit skipped Content.wrap."""
    lines: list[Content] = []
    for symbol, text in items:
        wrapped = text.wrap(max(1, width - len(symbol))) or [Content("")]
        lines.append(Content.styled(symbol, "$text-primary") + wrapped[0])
        lines.extend(Content(" " * len(symbol)) + line for line in wrapped[1:])
    return lines


@pytest.mark.parametrize("width", [8, 20, 41, 80])
def test_list_lines_laid_out_lazily_are_the_lines_content_wrap_makes(width: int) -> None:
    inline = partial(MarkdownBlock._token_to_content, cast(Any, None))
    texts = [t.format(n=n) for n in (1, 22, 333) for t in TEXTS] + ["", "tab\there", "x" * 90]
    items = [("• ", inline(answer_parser().parseInline(text)[0])) for text in texts]
    expected = [(line.plain, list(line.spans)) for line in _reference_list_lines(items, width)]
    assert [(line.plain, list(line.spans)) for line in list_lines(items, width)] == expected
    lazy = list_layout(items, width)
    assert len(lazy) == len(expected)
    assert [(line.plain, list(line.spans)) for line in lazy[::-1]] == expected[::-1]


def test_a_cell_or_item_of_plain_text_is_the_content_textual_makes_of_it() -> None:
    reference = partial(MarkdownBlock._token_to_content, cast(Any, None))
    parser = answer_parser()
    texts = [t.format(n=7) for t in TEXTS] + ["", "two  spaces\tand a tab", "日本 語"]
    for text in texts:
        token = parser.parseInline(text)[0]
        block = cast(Any, SimpleNamespace(_token_to_content=reference))
        ours, theirs = inline_content(block, token), reference(token)
        assert (ours.plain, list(ours.spans)) == (theirs.plain, list(theirs.spans))
