"""A streamed answer is drawn by one widget (AnswerStream) and ends looking exactly as
Textual's Markdown draws the same answer whole: same characters and same visible colours on
every cell, whatever the chunk boundaries. Nothing here is timed (bench/ is)."""

from __future__ import annotations

from functools import partial
from typing import Any, cast

import pytest
from rich.segment import Segment
from textual.app import App, ComposeResult
from textual.color import Color
from textual.containers import VerticalScroll
from textual.strip import Strip
from textual.widgets.markdown import MarkdownBlock

from mm_tui.agent.events import Notice, ReasoningDelta, TextDelta
from mm_tui.widgets.fast_markdown.answer_stream import JUMP_SHARE, AnswerStream
from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock
from mm_tui.widgets.fast_markdown.long_blocks import answer_parser
from mm_tui.widgets.fast_markdown.markdown_lines import IncrementalLines, LineRenderer, Palette
from mm_tui.widgets.transcript import Transcript
from mm_tui.window.event_bridge import EventBridge, EventsArrived
from tests.window.conftest import wait_for

#: Every test here is of mm-tui's own drawing (fast_answer.py), whatever MM_TUI_MARKDOWN says.
pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("own_markdown")]


#: Every block the stream draws itself, wide characters and emoji included.
DOCUMENT = """## Step 1: what changes

The function `step_1` reads the **configuration** once, checks every value it needs and
returns early with a *clear* message when one is missing — 日本語のテキスト 🙂 too.

- read the file once
- validate **each** key
  - nested item here, long enough to wrap around the edge of a narrow window
- return a typed object

```python
def step_1(path: Path) -> Settings:
    return Settings(**raw)  # 漢字
```

# Big title

1. one
2. two with `code`

> quoted text that is long enough to wrap around the line in a narrow window

---

    indented code

Last paragraph, with a [link](https://example.com).
"""


class _Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")


def _cells(strip: Strip) -> list[tuple[str, str, str, bool, bool, bool, bool]]:
    """What a person sees of each cell: the character, its colours and its text style (the
    foreground of a blank and styles nobody can see on a blank are not compared)."""
    cells = []
    for segment in strip:
        assert isinstance(segment, Segment)
        style = segment.style
        for char in segment.text:
            blank = char == " "
            cells.append(
                (
                    char,
                    "" if blank or style is None else str(style.color),
                    "" if style is None else str(style.bgcolor),
                    bool(style and style.bold and not blank),
                    bool(style and style.italic and not blank),
                    bool(style and style.underline and not blank),
                    bool(style and style.strike and not blank),
                )
            )
    return cells


def _screen(app: App[None]) -> list[list[Any]]:
    # Textual has no public way to read the composed screen other than an SVG screenshot,
    # whose rectangles follow segment boundaries; the compositor's strips are the screen.
    return [_cells(strip) for strip in app.screen._compositor.render_strips()]


async def _shown(app: App[None], answer: FastAnswerBlock, pieces: list[str]) -> list[list[Any]]:
    transcript = app.query_one("#transcript")
    await transcript.remove_children()
    await transcript.mount(answer)
    for piece in pieces:
        await answer.add(piece)
        await answer._flush()  # every piece drawn: the chunk boundaries matter
    await answer.finish()
    for _ in range(3):
        await app.workers.wait_for_complete()
        await app._pilot.pause()  # type: ignore[attr-defined]
    return _screen(app)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("width", [60, 100])
async def test_a_streamed_answer_ends_exactly_as_markdown_draws_it_whole(width: int) -> None:
    app = _Answers()
    async with app.run_test(size=(width, 90)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        whole = await _shown(app, FastAnswerBlock(DOCUMENT), [])
        pieces = [DOCUMENT[i : i + 7] for i in range(0, len(DOCUMENT), 7)]
        streamed_answer = FastAnswerBlock()
        streamed = await _shown(app, streamed_answer, pieces)
        assert [type(child) for child in streamed_answer.children] == [AnswerStream]
        assert streamed == whole


@pytest.mark.parametrize("theme", ["ansi-dark", "ansi-light"])
async def test_a_streamed_answer_draws_its_headings_in_ansi_themes(theme: str) -> None:
    """ANSI themes give level-3 and level-5 headings the text style `none`, which the stream's
    palette once read as a colour: the first streamed answer crashed the window."""
    app = _Answers()
    async with app.run_test(size=(80, 90)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        app.theme = theme
        document = "".join(
            f"{'#' * level} Level {level}\n\ntext {level}\n\n" for level in range(1, 7)
        )
        pieces = [document[i : i + 7] for i in range(0, len(document), 7)]
        streamed_answer = FastAnswerBlock()
        streamed = await _shown(app, streamed_answer, pieces)
        assert [type(child) for child in streamed_answer.children] == [AnswerStream]
        text = "\n".join("".join(cell[0] for cell in row) for row in streamed)
        assert [f"Level {level}" in text for level in range(1, 7)] == [True] * 6


async def test_a_line_gated_stream_ends_exactly_as_markdown_draws_it_whole() -> None:
    """Drawn by the line gate (clocked, some pieces held, some drawn at a heartbeat or as
    lines complete): emphasis, code fences, lists and wide characters opened in one frame and
    closed in a later one end exactly as the whole answer draws."""
    clock = [100.0]
    app = _Answers()
    async with app.run_test(size=(60, 90)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        whole = await _shown(app, FastAnswerBlock(DOCUMENT), [])
        answer = FastAnswerBlock(clocked=True, clock=lambda: clock[0])
        transcript = app.query_one("#transcript")
        await transcript.remove_children()
        await transcript.mount(answer)
        drew = 0
        for n, start in enumerate(range(0, len(DOCUMENT), 5)):
            await answer.add(DOCUMENT[start : start + 5])
            clock[0] += (0.05, 0.3, 1.1)[n % 3]  # held, lines due, a heartbeat
            drew += await answer.tick()
            await pilot.pause()
        await answer.finish()
        for _ in range(3):
            await pilot.pause()
        assert drew > 10 and [type(child) for child in answer.children] == [AnswerStream]
        assert _screen(app) == whole


def _layout(width: int) -> IncrementalLines:
    """The stream's layout alone, in the default theme (no app needed to draw lines)."""
    palette = Palette.of(App().get_css_variables(), Color.parse("#121212"), ansi=False, dark=True)
    # `_token_to_content` uses nothing of its block: Textual's own inline conversion.
    inline = partial(MarkdownBlock._token_to_content, cast(Any, None))
    return IncrementalLines(answer_parser().parse, LineRenderer(inline, palette), width)


def _drawn(layout: IncrementalLines) -> list[tuple[str, list[Any]]]:
    return [(line.plain, list(line.spans)) for line in layout.lines]


def test_every_chunk_boundary_draws_the_same_lines() -> None:
    width = 40
    whole = _layout(width)
    whole.extend(DOCUMENT)
    for cut in range(1, len(DOCUMENT)):
        layout = _layout(width)
        layout.extend(DOCUMENT[:cut])
        layout.extend(DOCUMENT[cut:])
        assert _drawn(layout) == _drawn(whole), f"cut after {DOCUMENT[:cut][-12:]!r}"


#: A long list as a model writes one (inline Markdown in every item), ordered so that its
#: numbers widen (99 to 100) while it streams; a long bullet list after it.
LONG_LISTS = (
    "Every case:\n\n"
    + "".join(f"{n}. **case {n}**: `step_{n}` passed, see *notes*\n" for n in range(20, 130))
    + "\nAnd the checks:\n\n"
    + "".join(f"- check **{n}** with `code` and a line long enough to wrap\n" for n in range(70))
)


def test_a_long_list_streamed_piece_by_piece_draws_the_lines_of_the_whole() -> None:
    """Items already drawn are kept from one piece to the next (long_runs, markdown_lines):
    every cut, every piece size, the lines are those of the whole list laid out at once."""
    for width in (40, 100):
        whole = _layout(width)
        whole.extend(LONG_LISTS)
        for size in (29, 400):
            layout = _layout(width)
            for start in range(0, len(LONG_LISTS), size):
                layout.extend(LONG_LISTS[start : start + size])
            assert _drawn(layout) == _drawn(whole), (width, size)


async def test_a_long_list_streamed_ends_on_screen_as_the_whole_answer() -> None:
    app = _Answers()
    async with app.run_test(size=(70, 50)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        whole = await _shown(app, FastAnswerBlock(LONG_LISTS), [])
        pieces = [LONG_LISTS[i : i + 61] for i in range(0, len(LONG_LISTS), 61)]
        streamed_answer = FastAnswerBlock()
        streamed = await _shown(app, streamed_answer, pieces)
        assert [type(child) for child in streamed_answer.children] == [AnswerStream]
        assert streamed == whole


async def test_one_character_deltas_and_one_huge_line_end_as_the_whole_answer() -> None:
    line = "word " * 2000 + "end."
    app = _Answers()
    async with app.run_test(size=(80, 60)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        whole = await _shown(app, FastAnswerBlock(line), [])
        assert await _shown(app, FastAnswerBlock(), list(line)) == whole
        text = DOCUMENT[:300]
        assert await _shown(app, FastAnswerBlock(), list(text)) == await _shown(
            app, FastAnswerBlock(text), []
        )


async def test_an_answer_with_a_table_becomes_textuals_markdown_when_it_ends() -> None:
    table = "Cases:\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\nDone.\n"
    app = _Answers()
    async with app.run_test(size=(60, 30)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        whole = await _shown(app, FastAnswerBlock(table), [])
        streamed_answer = FastAnswerBlock()
        assert await _shown(app, streamed_answer, [table[:20], table[20:]]) == whole
        assert not streamed_answer.query(AnswerStream)


async def test_a_clocked_answer_draws_its_first_words_at_once_then_whole_lines_when_due() -> None:
    """The line gate (line_gate.py) seen from the answer: the first words show at once; later
    lines wait while no frame is due (time stands still here); the end shows everything."""
    app = _Answers()
    async with app.run_test(size=(60, 30)) as pilot:
        answer = FastAnswerBlock(clocked=True, clock=lambda: 100.0)
        await app.query_one("#transcript").mount(answer)
        await answer.add("first line\n\n")  # the first piece's own timer draws it
        drawn = lambda: any(stream.size.height for stream in answer.query(AnswerStream)[:1])  # noqa: E731
        await wait_for(pilot, drawn, "the first words drawn")  # whenever the loop gets to it
        stream = answer.query_one(AnswerStream)
        shown = stream.size.height
        assert shown and not stream.waiting
        await answer.add("second\n\nthird\n\n")
        assert not await answer.tick()  # within LINE_FRAME_SECONDS of the first draw: held
        await pilot.pause()
        assert stream.waiting and stream.size.height == shown
        await answer.finish()  # the end shows everything at once
        await pilot.pause()
        assert not stream.waiting and stream.size.height > shown
        assert stream.text == "first line\n\nsecond\n\nthird\n\n"


class _Followed(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(preview_lines=5, clock=lambda: 0.0)


async def _stream_into(transcript: Transcript, text: str) -> FastAnswerBlock:
    """A delta into the followed transcript, drawn as the window's tick would draw it."""
    await transcript.add_text(text)
    await transcript.flush()
    answer = transcript._answer  # pyright: ignore[reportPrivateUsage]
    assert answer is not None
    await answer._flush()  # pyright: ignore[reportPrivateUsage]
    return answer


async def test_a_growing_answer_keeps_its_drawn_lines_yet_shows_what_a_full_repaint_shows() -> None:
    """The answer, its block and the followed transcript keep the lines they drew when the
    answer gains lines (grows_in_place.py), and once taller than the view the answer scrolls
    inside itself: at every chunk boundary the screen is what drawing every line again shows,
    and at the end its lines above come back and its blank rows go: the text shown stays on
    screen, moved down by as many rows as were blank below it."""
    app = _Followed()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        await transcript.add_user_message("go")
        hidden = 0
        for start in range(0, len(DOCUMENT), 11):
            answer = await _stream_into(transcript, DOCUMENT[start : start + 11])
            await pilot.pause()
            await pilot.pause()
            shown = _screen(app)
            for widget in (transcript, *transcript.query("*")):
                widget.refresh()
            await pilot.pause()
            assert _screen(app) == shown, f"after {DOCUMENT[: start + 11][-20:]!r}"
            hidden = max(hidden, answer.query_one(AnswerStream).hidden)
        assert hidden  # taller than the view, the answer scrolled inside itself
        assert transcript.scroll_y == transcript.max_scroll_y > 0  # followed, and scrolled
        before = [_plain(row) for row in _screen(app)]
        blank = answer.query_one(AnswerStream).blank_below
        assert before[len(before) - blank :] == [" " * len(before[0])] * blank
        await answer.finish()  # its lines above come back; the view still shows the bottom
        await pilot.pause()
        await pilot.pause()
        assert answer.query_one(AnswerStream).hidden == 0
        after = [_plain(row) for row in _screen(app)]
        assert after[blank:] == before[: len(before) - blank]


def _without_blank_rows_below(rows: list[str]) -> list[str]:
    while rows and not rows[-1].strip():
        rows = rows[:-1]
    return rows


async def test_an_answer_scrolling_inside_itself_moves_seldom_and_by_a_share_of_the_view() -> None:
    """Once taller than the followed view, the answer's text stands still while it is written:
    new lines fill the blank rows below it, and when those run out every line moves up at
    once by a share of the view (answer_stream.JUMP_SHARE), leaving blank rows again, and
    Textual draws only the rows that come (those it drew move up with their lines); the
    screen is always what drawing every line again shows."""
    app = _Followed()
    lines = [f"Line {n:02d} of a long answer." for n in range(1, 80)]
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        await transcript.add_user_message("go")
        moves: list[int] = []
        room = transcript.scrollable_content_region.height + 1  # the view and TAIL_MARGIN
        jump = room // JUMP_SHARE
        blank = 0
        drawn: set[int] = set()  # rows of the answer drawn again (not kept) by a frame
        for line in lines:
            if transcript.query(AnswerStream):
                stream = transcript.query_one(AnswerStream)
                if "render_line" not in vars(stream):  # counted: a row Textual draws again
                    draw_row = stream.render_line
                    stream.render_line = lambda y, draw=draw_row: drawn.add(y) or draw(y)
            drawn.clear()
            answer = await _stream_into(transcript, line + "\n\n")
            await pilot.pause()
            await pilot.pause()
            stream = answer.query_one(AnswerStream)
            shown = [_plain(row) for row in _screen(app)]
            came = sorted(drawn)
            for widget in (transcript, *transcript.query("*")):
                widget.refresh()
            await pilot.pause()
            assert [_plain(row) for row in _screen(app)] == shown, f"after {line!r}"
            if not moves or stream.hidden != moves[-1]:  # it moved: `jump` rows blank below
                if moves and moves[-1]:  # inside itself: the rows kept move up, undrawn
                    assert len(came) < stream.size.height / 2, (line, came)
                moves.append(stream.hidden)
                assert stream.hidden == 0 or stream.blank_below == jump, line
            elif stream.hidden:  # the line (and the blank line after it) filled blank rows
                assert stream.blank_below == blank - 2, line
            blank = stream.blank_below
            assert line in _without_blank_rows_below(shown)[-1]  # the newest line is drawn
        assert len(moves) >= 10 and len(moves) <= 2 * len(lines) / jump + 2, moves


async def test_scrolling_up_while_the_answer_scrolls_inside_itself_moves_the_view_one_line() -> (
    None
):
    app = _Followed()
    async with app.run_test(size=(60, 16)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, len(DOCUMENT), 11):
            answer = await _stream_into(transcript, DOCUMENT[start : start + 11])
            await pilot.pause()
        stream = answer.query_one(AnswerStream)
        assert stream.hidden
        before = [_plain(row) for row in _screen(app)]
        transcript.scroll_up(animate=False)  # as a wheel or a key does: the anchor lets go
        for _ in range(4):
            await pilot.pause()
        after = [_plain(row) for row in _screen(app)]
        assert stream.hidden == 0
        assert after[1:] == before[:-1]  # every line one row lower, nothing else moved
        where = transcript.scroll_y
        new = [f"A new paragraph {n}, below the text." for n in range(8)]
        await transcript.add_text("\n" + "\n\n".join(new) + "\n")
        await answer._flush()  # pyright: ignore[reportPrivateUsage]
        await pilot.pause()
        assert stream.hidden == 0  # the view reads further up: the answer grows as before
        assert transcript.scroll_y == where  # and the view stays where the person put it:
        # What it showed is still there; the new text goes in the blank rows below the answer
        # at most, and below the view.
        rows = list(zip([_plain(row) for row in _screen(app)], after, strict=True))
        assert all(row == was for row, was in rows if was.strip())
        assert all(
            not row.strip() or "A new paragraph" in row for row, was in rows if not was.strip()
        )
        assert new[-1] not in "".join(row for row, _ in rows)


def _plain(row: list[Any]) -> str:
    """A row's characters but the scrollbar's and the transcript's right padding (the thumb
    moves when the answer's lines above come back)."""
    return "".join(cell[0] for cell in row[:-2])


class _Target:
    def __init__(self) -> None:
        self.posted: list[object] = []

    def post_message(self, message: object) -> bool:
        self.posted.append(message)
        return True


def test_held_deltas_wait_for_the_tick_and_other_events_take_them_along() -> None:
    target = _Target()
    bridge = EventBridge(target)  # type: ignore[arg-type]
    bridge(TextDelta("a"))
    assert len(target.posted) == 1 and isinstance(target.posted[0], EventsArrived)
    assert bridge.take() == [TextDelta("a")]
    bridge.hold_deltas = True
    bridge(TextDelta("b"))
    bridge(ReasoningDelta("r"))
    assert len(target.posted) == 1 and bridge.pending  # queued, the window not woken
    bridge(Notice("info", "n"))  # anything else wakes it, the deltas go first
    assert len(target.posted) == 2
    assert bridge.take() == [TextDelta("b"), ReasoningDelta("r"), Notice("info", "n")]
