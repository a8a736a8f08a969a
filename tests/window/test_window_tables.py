"""Markdown tables in an answer honour their columns' alignment, streamed and final.

The answer comes from the scripted server over real HTTP in small chunks, so the table is
built while it streams; what is checked is the text each cell draws.
"""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from textual.widgets._markdown import MarkdownTableContent

from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.fast_markdown.long_blocks import TableLines
from scripted_server import Reply
from tests.window.conftest import send, settle, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio

TABLE = (
    "Here:\n\n"
    "| name | role | count |\n"
    "| :-- | :-: | --: |\n"
    "| ada | engineer of note | 7 |\n"
    "| grace | admiral | 12345 |\n\n"
    "Done.\n"
)


def cell_lines(app: Any) -> list[str]:  # padding included: Textual draws the whole cell
    """What each cell of the answer's table draws on its first line, in grid order."""
    grid = app.query(MarkdownTableContent).first()
    return [cell.render_line(0).text for cell in grid.children]


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_streamed_table_aligns_left_centre_and_right_as_its_delimiter_row_says(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text=TABLE, chunk_size=6, delay=0.01))
    app = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "who?")
        await wait_for(pilot, turn_over(app), "the answer ends")
        await settle(pilot)
        grid = app.query(MarkdownTableContent).first()
        widths = [cell.size.width for cell in grid.children]
        lines = cell_lines(app)
        # name: left — the text starts the cell.
        assert lines[3].startswith("ada") and lines[6].startswith("grace")
        # role: centred — as much room on each side, give or take one.
        for at in (1, 4, 7):
            before = len(lines[at]) - len(lines[at].lstrip())
            after = widths[at] - len(lines[at].rstrip())
            assert before > 1 and abs(before - after) <= 1, lines[at]
        # count: right — the text ends the cell.
        assert lines[5].endswith("7") and lines[5].startswith(" ")
        assert lines[8].endswith("12345")
        assert lines[2].endswith("count") and lines[2].startswith(" ")


async def test_more_alignment_cells_than_columns_is_no_table_and_the_text_is_shown(
    model_server: Any, live_app: Any
) -> None:
    text = "| a | b |\n| :-- | :-: | --: |\n| 1 | 2 |\n"
    model_server.enqueue(Reply(text=text, chunk_size=5))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "table?")
        await wait_for(pilot, turn_over(app), "the answer ends")
        await settle(pilot)
        assert not app.query(MarkdownTableContent)  # GFM: the delimiter row must match
        answer = app.query_one(AnswerBlock)
        assert answer.to_markdown() == text.strip()
        assert "| :-- | :-: | --: |" in _screen(app)  # drawn as a paragraph's text


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_long_table_drawn_as_lines_keeps_its_alignment(
    model_server: Any, live_app: Any
) -> None:
    rows = "".join(f"| item {n} | {n} | {'x' * (n % 5)} |\n" for n in range(1, 101))
    text = f"| item | number | mark |\n| :-- | --: | :-: |\n{rows}"
    model_server.enqueue(Reply(text=text, chunk_size=200))
    app = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "long table")
        await wait_for(pilot, turn_over(app), "the answer ends")
        await settle(pilot)
        table = app.query_one(TableLines)
        lines = [line.plain for line in table.lay_out(60)]
        assert lines[0] == "item     │ number │ mark"
        assert lines[2] == "item 1   │      1 │  x  "
        assert lines[10] == "item 9   │      9 │ xxxx"
        assert lines[101] == "item 100 │    100 │     "


def _screen(app: Any) -> str:
    """The text on screen, as the screenshot has it (a streamed answer is drawn as lines by
    one widget: there are no paragraph widgets to read)."""
    svg = re.sub(r"<[^>]+>", "", app.export_screenshot())
    return html.unescape(svg).replace("\xa0", " ")
