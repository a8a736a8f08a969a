"""The line gate: a clocked answer draws whole lines, a pending partial line at the
heartbeat, everything when forced; the clock is the test's own (nothing here waits on time).
And folded reasoning, which does not redraw while the model thinks."""

from __future__ import annotations

import pytest
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Static

from mm_tui.widgets.answer_blocks import ReasoningBlock
from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock
from mm_tui.widgets.fast_markdown.line_gate import HEARTBEAT_SECONDS, LINE_FRAME_SECONDS, LineGate
from tests.window.conftest import wait_for

pytestmark = pytest.mark.anyio


class Clock:
    """A clock that moves only when the test says."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_gate_opens_for_lines_when_a_frame_is_due_and_for_any_change_at_the_heartbeat() -> None:
    clock = Clock()
    gate = LineGate(clock)
    assert not gate.pending and not gate.lines_due() and not gate.overdue()
    gate.changed()
    assert gate.lines_due()  # nothing drawn yet: lines may go at once
    gate.drawn()
    gate.changed()
    assert not gate.lines_due() and not gate.overdue()
    clock.now += LINE_FRAME_SECONDS
    assert gate.lines_due() and not gate.overdue()
    clock.now += HEARTBEAT_SECONDS
    assert gate.overdue()
    gate.drawn()
    assert not gate.pending and not gate.overdue()
    gate.laid_out(1.0)  # a huge block took a second to lay out: frames space out
    gate.changed()
    clock.now += LINE_FRAME_SECONDS
    assert not gate.lines_due()
    clock.now += 3.0
    assert gate.lines_due()


class _Answers(App[None]):
    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="transcript")


async def _clocked_answer(
    pilot: Pilot[None], clock: Clock, first: str
) -> tuple[FastAnswerBlock, AnswerStream]:
    answer = FastAnswerBlock(clocked=True, clock=clock)
    await pilot.app.query_one("#transcript").mount(answer)
    await answer.add(first)  # the first piece's own timer draws it
    drawn = lambda: any(stream.size.height for stream in answer.query(AnswerStream)[:1])  # noqa: E731
    await wait_for(pilot, drawn, "the first words drawn")  # whenever the loop gets to it
    return answer, answer.query(AnswerStream).first()


async def test_a_partial_line_waits_for_the_heartbeat_and_completed_lines_for_the_next_frame() -> (
    None
):
    clock = Clock()
    app = _Answers()
    async with app.run_test(size=(60, 30)) as pilot:
        answer, stream = await _clocked_answer(pilot, clock, "First line.\n\nSecond")
        assert stream.shown == ["First line.", "", "Second", ""]

        await answer.add(" partial")  # the last line changes, no line completes
        assert not await answer.tick()
        clock.now += HEARTBEAT_SECONDS - 0.01
        assert not await answer.tick()
        assert stream.shown[2] == "Second" and stream.waiting
        clock.now += 0.01
        assert await answer.tick()  # pending a heartbeat long: drawn
        assert stream.shown[2] == "Second partial" and not stream.waiting

        await answer.add(" ends.\n\nThird line.\n\nFour")  # lines complete, within a frame
        assert not await answer.tick()
        clock.now += LINE_FRAME_SECONDS
        assert await answer.tick()  # one frame for both lines
        assert stream.shown == ["First line.", "", "Second partial ends.", "", "Third line.", "",
                                "Four", ""]  # fmt: skip

        await answer.add("th and the end")
        await answer.finish()  # the end draws what is held, at once
        await pilot.pause()
        assert stream.shown[6] == "Fourth and the end"
        assert (
            answer.source
            == "First line.\n\nSecond partial ends.\n\nThird line.\n\nFourth and the end"
        )


async def test_text_that_overflows_the_last_line_completes_it_without_a_newline() -> None:
    clock = Clock()
    app = _Answers()
    async with app.run_test(size=(40, 30)) as pilot:
        answer, stream = await _clocked_answer(pilot, clock, "Words")
        clock.now += LINE_FRAME_SECONDS
        await answer.add(" and more words")  # still fits on the line: held
        assert not await answer.tick()
        await answer.add(" until the line is full and wraps over")
        assert await answer.tick()
        assert len(stream.shown) > 2 and stream.shown[0].startswith("Words and more words")
        assert " ".join(line for line in stream.shown if line) == (
            "Words and more words until the line is full and wraps over"
        )


async def test_wide_characters_that_overflow_the_last_line_complete_it() -> None:
    """Eighteen CJK characters are 18 characters but 36 cells: they cannot fit on a line with
    fewer cells left, so they are laid out and drawn as a completed line (counted in cells)."""
    clock = Clock()
    app = _Answers()
    async with app.run_test(size=(40, 30)) as pilot:
        answer, stream = await _clocked_answer(pilot, clock, "Words")
        clock.now += LINE_FRAME_SECONDS
        await answer.add("日本語のテキスト🙂日本語のテキスト")  # 18 wide characters: 36 cells
        assert await answer.tick()
        assert len(text_lines := [line for line in stream.shown if line]) == 2
        assert "".join(text_lines) == "Words日本語のテキスト🙂日本語のテキスト"


async def test_folded_reasoning_shows_all_it_received_when_opened() -> None:
    """Folded, the reasoning does not redraw its hidden text on every piece (each update laid
    the screen out while the model thinks); opened, it shows everything, and grows after."""
    app = _Answers()
    async with app.run_test(size=(60, 30)) as pilot:
        block = ReasoningBlock()
        await app.query_one("#transcript").mount(block)
        for piece in ("Let me ", "look at ", "the file."):
            block.add(piece)
        body = block.query_one(".reasoning-text", Static)
        block.collapsed = False
        await pilot.pause()
        assert str(body.render()) == "Let me look at the file."
        block.add(" Then test it.")
        await pilot.pause()
        assert str(body.render()) == "Let me look at the file. Then test it."
        assert block.to_markdown().endswith("Let me look at the file. Then test it.")
