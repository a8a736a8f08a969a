"""Private members of pinned libraries that mm-tui cannot avoid, each used here the way the
code uses it, so a Textual upgrade that changes them fails this test and not a user's window.
The code reaches every one of them through the adapter mm_tui/widgets/textual_private.py
(tests/architecture/test_textual_private.py keeps them there and pins their shapes); the
modules named below call it.

Textual 8.2.8 (pinned exactly in pyproject) exports no list block classes from its public
`textual.widgets.markdown`; `mm_tui/widgets/fast_markdown/compact_lists.py` subclasses them and reads each
block's `_markdown`, `_token`, `_content` and `_blocks` to draw a simple list item as one widget.
`mm_tui/widgets/fast_markdown/aligned_table.py` subclasses `MarkdownTable` and `MarkdownTableContent` (their
`_get_headers_and_rows`, `_headers`, `_rows`, `_update_rows`) and reads each `MarkdownTH`'s
`_token` and `_blocks` to honour a column's alignment.
`mm_tui/widgets/grows_in_place.py` overrides `Widget._size_updated` and `Widget._set_dirty` so
that a widget growing at the bottom keeps the lines it drew and asks for no second layout.
`mm_tui/typeahead_driver.py` parses the keys typed before the window started with
`textual._xterm_parser.XTermParser`, the parser `LinuxDriver.run_input_thread` makes, and
overrides that public method to feed them first.
`mm_tui/widgets/line_strips.py` resolves span styles with `Widget._get_style` and follows
`Content`'s private formatting to draw a line that fits; tests/window/test_line_strips.py
compares what it draws with `Visual.to_strips`, line for line.
`mm_tui/widgets/fast_markdown/answer_stream.py` (`_shift_drawn`) moves the rows Textual drew of the streaming
answer up with its lines when it scrolls inside itself: it reads and sets the widget's
`_styles_cache` members `_cache` (its drawn rows by row) and `_dirty_lines` (those to draw).
"""

from __future__ import annotations

import inspect

import pytest
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import _markdown as textual_markdown

from mm_tui.widgets.fast_markdown.compact_lists import ListItemLine
from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock
from mm_tui.widgets.grows_in_place import GrowsInPlace

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class _AnswerApp(App[None]):
    def compose(self) -> ComposeResult:
        # A whole answer (a replay, a revived block): Textual's Markdown with compact lists.
        # A streamed one is drawn by AnswerStream (tests/window/test_answer_stream.py).
        yield FastAnswerBlock("Steps:\n\n- first thing\n- second **bold**\n\n1. one\n2. two\n")


async def test_a_simple_list_item_is_drawn_by_one_widget_from_textuals_private_members() -> None:
    app = _AnswerApp()
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        lines = list(app.query(ListItemLine))
        assert [line.symbol for line in lines] == ["• ", "• ", " 1. ", " 2. "]
        assert [line._content.plain for line in lines] == [
            "first thing",
            "second bold",
            "one",
            "two",
        ]


async def test_a_table_cell_is_aligned_through_textuals_private_table_members() -> None:
    app = _AnswerApp()
    async with app.run_test(size=(60, 20)) as pilot:
        answer = app.query_one(FastAnswerBlock)
        await answer.add("| a | b |\n| --: | :-: |\n| 1 | 2 |\n")
        await answer.finish()
        await pilot.pause()
        table = app.query_one(textual_markdown.MarkdownTable)
        assert table._headers and table._rows  # what Textual's streaming update reads
        grid = app.query_one(textual_markdown.MarkdownTableContent)
        assert [cell.styles.text_align for cell in grid.children] == [
            "right",
            "center",
            "right",
            "center",
        ]


class _WriterApp(App[None]):
    pass


async def test_the_app_writes_to_its_terminal_through_the_private_driver_as_bell_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`Preferences._write_to_terminal` (mm_tui/app_parts/preferences.py) (notifications) writes escapes through
    `App._driver.write`, the way Textual's own `App.bell` and clipboard do; no public door."""
    from textual.drivers.headless_driver import HeadlessDriver

    written: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: written.append(data))
    app = _WriterApp()
    async with app.run_test():
        driver = app._driver  # pyright: ignore[reportPrivateUsage]
        assert isinstance(driver, HeadlessDriver)
        driver.write("\x07")
    assert "\x07" in written


def test_the_size_and_dirty_members_grows_in_place_overrides_keep_their_signatures() -> None:
    size_updated = inspect.signature(Widget._size_updated)  # pyright: ignore[reportPrivateUsage]
    assert list(size_updated.parameters) == [
        "self",
        "size",
        "virtual_size",
        "container_size",
        "layout",
    ]
    assert size_updated.parameters["layout"].default is True
    set_dirty = inspect.signature(Widget._set_dirty)  # pyright: ignore[reportPrivateUsage]
    assert [(p.name, p.kind) for p in set_dirty.parameters.values()] == [
        ("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ("regions", inspect.Parameter.VAR_POSITIONAL),
    ]


class _Lines(Widget):
    DEFAULT_CSS = "_Lines { height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.count = 3
        self.drawn: list[int] = []

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self.count

    def render_line(self, y: int) -> Strip:
        self.drawn.append(y)
        return Strip.blank(self.size.width)


class _GrowingLines(GrowsInPlace, _Lines):
    pass


class _LinesApp(App[None]):
    def compose(self) -> ComposeResult:
        yield _Lines()
        yield _GrowingLines()


async def test_a_widget_growing_in_place_draws_only_its_new_lines_where_textual_draws_all() -> None:
    app = _LinesApp()
    async with app.run_test(size=(20, 20)) as pilot:
        await pilot.pause()
        plain, growing = app.query_one(_Lines), app.query_one(_GrowingLines)
        assert plain.drawn and growing.drawn
        for widget in (plain, growing):
            widget.drawn.clear()
            widget.count = 5
            widget.refresh(layout=True, repaint=False)
        await pilot.pause()
        await pilot.pause()
        assert sorted(set(plain.drawn)) == [0, 1, 2, 3, 4]  # Textual forgets every line
        assert sorted(set(growing.drawn)) == [3, 4]  # the mixin keeps the lines above


def test_the_private_xterm_parser_parses_as_the_terminal_driver_uses_it() -> None:
    """`feed(text)` then `feed("")` (the end: a lone Esc is not held), as the driver's input
    thread does at its close; and `run_input_thread` is still the input thread's body."""
    import textual.drivers.linux_driver as linux_driver
    from textual import events
    from textual._xterm_parser import XTermParser  # pyright: ignore[reportPrivateUsage]

    assert linux_driver.XTermParser is XTermParser  # the driver's own parser
    parser = XTermParser()
    parsed = [*parser.feed("a\r\x1b[A"), *parser.feed("\x1b"), *parser.feed("")]
    assert [e.key for e in parsed if isinstance(e, events.Key)] == ["a", "enter", "up", "escape"]
    source = inspect.getsource(linux_driver.LinuxDriver._run_input_thread)  # pyright: ignore[reportPrivateUsage]
    assert "self.run_input_thread()" in source


def test_a_styles_cache_serves_its_drawn_rows_by_row_and_draws_its_dirty_ones() -> None:
    """What `AnswerStream._shift_drawn` relies on: a row held in `_cache` and not in
    `_dirty_lines` is served as it is; a dirty row is drawn again from the widget."""
    from textual._styles_cache import StylesCache
    from textual.color import Color
    from textual.css.styles import Styles

    cache = StylesCache()
    kept, drawn = Strip.blank(4), []

    def render_line(y: int) -> Strip:
        drawn.append(y)
        return Strip.blank(4)

    cache._cache = {0: kept}  # pyright: ignore[reportPrivateUsage]
    cache._dirty_lines = {1}  # pyright: ignore[reportPrivateUsage]
    cache._width = 4  # pyright: ignore[reportPrivateUsage]
    strips = cache.render(
        Styles(), Size(4, 2), Color(0, 0, 0), Color(0, 0, 0), render_line, [], None, None
    )
    assert strips[0] is kept and drawn == [1]
    assert cache._dirty_lines == set()  # pyright: ignore[reportPrivateUsage]
