"""`line_strip` draws a line as Textual's generic path does (`Visual.to_strips`, then the
selection's offsets), segment for segment: every kind of line the streamed answer draws, in a
dark and a light theme, under a selection, and the lines it leaves to Textual. A Textual
upgrade that changes the generic path fails here rather than drawing differently. Nothing here
is timed (bench/ is)."""

from __future__ import annotations

from typing import Any

import pytest
from rich.cells import cell_len
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.color import Color
from textual.containers import VerticalScroll
from textual.content import Content, Span
from textual.geometry import Offset
from textual.pilot import Pilot
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from mm_tui.widgets import line_strips
from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock
from mm_tui.widgets.line_selection import placed, with_selection
from mm_tui.widgets.line_strips import line_strip
from mm_tui.widgets.status_line import StatusLine

pytestmark = pytest.mark.anyio

#: Every Markdown block the answer draws while it streams, and the spans inside them.
ANSWER = """# Title one

## Step 2: **bold** in a heading

### Third `code` level

#### Fourth

##### Fifth

###### Sixth

Plain text with **bold**, *italic*, ***both***, `inline code`, ~~struck~~ and a
[link](https://example.com) in the middle, then **bold with `code` inside** and more.
日本語のテキスト、漢字とかな 🙂🎉 wide characters: ｆｕｌｌｗｉｄｔｈ and e\u0301 combined.

- a bullet with **bold**
- a bullet with a [link](https://example.com/x)
  - nested bullet, long enough to wrap around the edge of a narrow window, twice over
    - deeper still
- 🙂 emoji first

1. one
2. two with `code`
10. ten

```python
def step(path: Path) -> Settings:  # 漢字 comment
    raw = yaml.safe_load(path.read_text())
    return Settings(**raw)
```

```json
{"key": [1, 2.5, true, null], "text": "🙂"}
```

```
no language at all
```

> quoted text that is long enough to wrap around the line in a narrow window, with *style*
>
> > nested quote with `code`

---

    indented code block

Last paragraph.

| a | b |
|---|---|
| 1 | **2** |
"""

THEMES = ("textual-dark", "textual-light", "nord")


class _Lines(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")


def _segments(strip: Strip) -> list[tuple[Any, ...]]:
    """Each segment as the compositor reads it: text, style (colours, attributes, meta with
    the cells' offsets, link), whether the style is set at all, control codes."""
    out = []
    for segment in strip:
        assert isinstance(segment, Segment)
        style = segment.style
        out.append(
            (
                segment.text,
                style,
                None if style is None else style.meta,
                None if style is None else style.link,
                bool(style),
                segment.control,
            )
        )
    return out


def _generic(widget: Widget, line: Content, width: int, y: int, style: Style) -> Strip:
    strips = Visual.to_strips(widget, line, width, 1, style, apply_selection=False)
    return placed(strips[0], y)


def _same(widget: Widget, line: Content, width: int, y: int, style: Style | None = None) -> None:
    style = widget.visual_style if style is None else style
    fast = line_strip(widget, line, width, style, y)
    slow = _generic(widget, line, width, y, style)
    assert _segments(fast) == _segments(slow), f"line {y}: {line.plain!r}"
    assert fast.cell_length == slow.cell_length


async def _stream(app: _Lines, pilot: Pilot[None], text: str) -> AnswerStream:
    transcript = app.query_one("#transcript")
    await transcript.remove_children()
    answer = FastAnswerBlock()
    await transcript.mount(answer)
    await answer.add(text)
    await answer._flush()  # pyright: ignore[reportPrivateUsage]
    for _ in range(2):
        await pilot.pause()
    return app.query_one(AnswerStream)


def _lines(stream: AnswerStream) -> list[Content]:
    return list(stream._lines[: stream._height])  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("width", [44, 100])
async def test_every_line_of_a_streamed_answer_is_drawn_as_textual_draws_it(
    theme: str, width: int
) -> None:
    app = _Lines()
    async with app.run_test(size=(width, 120)) as pilot:
        app.theme = theme
        stream = await _stream(app, pilot, ANSWER)
        lines = _lines(stream)
        kinds = {str(span.style) for line in lines for span in line.spans}
        assert len(lines) > 50 and len(kinds) > 10  # headings, code, fences, quotes...
        drawn = stream.content_region.width
        for y, line in enumerate(lines):
            _same(stream, line, drawn, y)


async def test_a_selection_across_lines_is_drawn_as_textual_draws_it() -> None:
    app = _Lines()
    async with app.run_test(size=(60, 120)) as pilot:
        stream = await _stream(app, pilot, ANSWER)
        lines = _lines(stream)
        # from the middle of the paragraph's first line into the fence (wide characters too)
        first = next(y for y, line in enumerate(lines) if "Plain text" in line.plain)
        last = next(y for y, line in enumerate(lines) if "safe_load" in line.plain)
        app.screen.selections = {stream: Selection(Offset(7, first), Offset(12, last))}
        await pilot.pause()
        selected = with_selection(stream, lines, 0)
        assert selected[first].spans != lines[first].spans  # the selection is drawn
        for y, line in enumerate(selected):
            _same(stream, line, stream.content_region.width, y)


async def test_plain_lines_are_drawn_without_textuals_generic_path(monkeypatch: Any) -> None:
    """The comparisons above are of this module's own drawing, not of Textual's with itself:
    only lines holding a link (Textual styles links by the widget's state) or wider than the
    widget go to `Visual.to_strips`."""
    app = _Lines()
    async with app.run_test(size=(80, 120)) as pilot:
        stream = await _stream(app, pilot, ANSWER)
        generic: list[str] = []
        to_strips = Visual.to_strips

        def counted(widget: Widget, visual: Any, *args: Any, **kwargs: Any) -> list[Strip]:
            generic.append(getattr(visual, "plain", ""))
            return to_strips(widget, visual, *args, **kwargs)

        monkeypatch.setattr(Visual, "to_strips", counted)
        lines = _lines(stream)
        width = stream.content_region.width
        for y, line in enumerate(lines):
            line_strip(stream, line, width, stream.visual_style, y)
        # (the title is laid out wider than the widget: Textual wraps it and draws a part)
        left = [line.plain for line in lines if "link" in line.plain or line.cell_length > width]
        assert generic == left
        assert len(left) == 3 and len(lines) > 60


class _Plain(Widget):
    DEFAULT_CSS = "_Plain { height: 3; }"


class _Centred(Widget):
    DEFAULT_CSS = "_Centred { height: 3; text-align: center; }"


class _Aligned(Widget):
    DEFAULT_CSS = "_Aligned { height: 3; content-align: right bottom; }"


class _Padded(Widget):
    DEFAULT_CSS = "_Padded { height: 3; line-pad: 1; }"


class _Widgets(App[None]):
    def compose(self) -> ComposeResult:
        yield _Plain()
        yield _Centred()
        yield _Aligned()
        yield _Padded()


#: Lines not from Markdown: edge cases of the fast path and of the generic path it leaves to.
ODD_LINES = {
    "empty, no spans": Content(""),
    "empty with a span": Content("", [Span(0, 0, "bold")]),
    "no spans": Content("plain words"),
    "exactly the width": Content("x" * 20, [Span(0, 20, "bold $accent")]),
    "trailing blanks at the width": Content("ab" + " " * 18, [Span(0, 2, "italic")]),
    "overlapping spans": Content(
        "overlapping spans here",
        [Span(0, 12, "bold"), Span(5, 17, "italic $warning"), Span(5, 17, "underline")],
    ),
    "nested spans": Content(
        "outer inner outer", [Span(0, 17, Style(bold=True)), Span(6, 11, "reverse")]
    ),
    "an empty span": Content("abc", [Span(1, 1, "bold")]),
    "a style with meta": Content("meta", [Span(0, 4, Style.from_meta({"key": 1}))]),
    "a link": Content("a link", [Span(2, 6, Style.from_meta({"@click": "app.bell"}))]),
    "wider than the width": Content("too wide " * 4, [Span(0, 3, "bold")]),
    "wide characters past the width": Content("漢字" * 6),
    "combining marks, trailing blanks": Content("e\u0301" * 9 + "   "),
    "a tab": Content("a\tb", [Span(0, 3, "bold")]),
    "a line break": Content("one\ntwo", [Span(0, 7, "bold")]),
    "a span past the end": Content("short", [Span(2, 9, "bold")]),
    "spans past the end": Content("short", [Span(2, 9, "bold"), Span(3, 12, "italic")]),
}


@pytest.mark.parametrize("name", list(ODD_LINES))
async def test_odd_lines_are_drawn_as_textual_draws_them(name: str) -> None:
    app = _Widgets()
    async with app.run_test(size=(20, 14)):
        line = ODD_LINES[name]
        for widget in app.query(Widget):
            for y in (0, 3):
                _same(widget, line, 20, y)
        # a base style seen through (its background and colour blend again with each span's)
        translucent = Style(Color(200, 30, 30, 0.5), Color(10, 200, 10, 0.6), italic=True)
        _same(app.query_one(_Plain), line, 20, 1, translucent)


async def test_a_line_at_no_width_is_a_blank_strip() -> None:
    app = _Widgets()
    async with app.run_test(size=(20, 8)):
        widget = app.query_one(_Plain)
        assert line_strip(widget, Content("text"), 0, widget.visual_style).cell_length == 0


async def test_styles_are_resolved_again_in_a_new_theme() -> None:
    """The resolved styles are kept by the styles they combine, not by their names: `$accent`
    in another theme is another style."""
    app = _Widgets()
    async with app.run_test(size=(20, 8)) as pilot:
        widget = app.query_one(_Plain)
        line = Content("accent", [Span(0, 6, "$accent")])
        colours = []
        for theme in THEMES:
            app.theme = theme
            await pilot.pause()
            _same(widget, line, 20, 0)
            strip = line_strip(widget, line, 20, widget.visual_style)
            colours.append(next(iter(strip)).style)
        assert colours[0] != colours[1]
        assert line_strips._RESOLVED  # pyright: ignore[reportPrivateUsage]


class _Status(App[None]):
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status-line")


#: The status line's states: (state, frame, elapsed, queued, held, new below).
STATES = [
    ("", 0, "", 0, False, 0),
    ("Waiting for the model", 3, "", 0, False, 0),
    ("Writing the answer", 7, "2m 05s", 0, False, 0),
    ("Running read_file 漢字 🙂", 11, "12s", 1, False, 0),
    ("Thinking", 2, "3s", 3, True, 0),
    ("", 0, "", 2, False, 5),
    ("Writing the answer", 4, "59s", 2, True, 12),
]


def _set(status: StatusLine, state: tuple[str, int, str, int, bool, int]) -> None:
    (status.state, status.frame, status.elapsed, status.queued, status.held,
     status.new_below) = state  # fmt: skip


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("width", [120, 30])
async def test_the_status_line_is_drawn_as_textual_draws_it(
    theme: str, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In every state, and too narrow for its text (Textual wraps it and shows a part)."""
    app = _Status()
    async with app.run_test(size=(width, 5)) as pilot:
        app.theme = theme
        status = app.query_one(StatusLine)
        to_strips = Visual.to_strips
        generic: list[str] = []

        def counted(widget: Widget, visual: Content, *args: Any, **kwargs: Any) -> list[Strip]:
            generic.append(visual.plain)
            return to_strips(widget, visual, *args, **kwargs)

        for state in STATES:
            _set(status, state)
            await pilot.pause()
            size = status.size
            expected = to_strips(
                status, status.render(), size.width, size.height, status.visual_style
            )
            status.refresh()  # drawn again, not Textual's last drawing
            monkeypatch.setattr(Visual, "to_strips", counted)
            drawn = status.render_line(0)
            monkeypatch.setattr(Visual, "to_strips", to_strips)
            assert _segments(drawn) == _segments(expected[0]), state
        # drawn by line_strip itself where it fits, not by Textual's generic path
        assert all(cell_len(text) > width - 2 for text in generic)
        assert len(generic) < len(STATES)


async def test_a_selection_on_the_status_line_is_drawn_by_textual() -> None:
    app = _Status()
    async with app.run_test(size=(60, 5)) as pilot:
        status = app.query_one(StatusLine)
        _set(status, STATES[-1])
        app.screen.selections = {status: Selection(Offset(2, 0), Offset(9, 0))}
        await pilot.pause()
        size = status.size
        expected = Visual.to_strips(
            status, status.render(), size.width, size.height, status.visual_style
        )
        assert _segments(status.render_line(0)) == _segments(expected[0])
        plain = Visual.to_strips(
            status, status.render(), size.width, size.height, status.visual_style,
            apply_selection=False,
        )  # fmt: skip
        assert _segments(expected[0]) != _segments(plain[0])  # the selection shows
