"""A streamed answer stays one self-drawing widget once finished (answer_stream.py): dragging
over it selects and copies its text, as over Textual's Markdown (line_selection.py). Nothing
here is timed (bench/ is)."""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.agent.events import AssistantMessageDone, TextDelta, TurnEnded, TurnStarted
from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from tests.window.conftest import play, settle, wait_for

pytestmark = pytest.mark.anyio

ANSWER = "First paragraph of the answer.\n\nSecond paragraph, also plain.\n\n- one\n- two\n"


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_dragging_over_a_streamed_answer_selects_and_copies_its_lines(
    still_app: Any,
) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [TurnStarted("go"), TextDelta(ANSWER[:20])])
        await wait_for(pilot, lambda: bool(app.query(AnswerStream)), "the answer streams")
        await play(pilot, [TextDelta(ANSWER[20:]), AssistantMessageDone(ANSWER, ""),
                           TurnEnded("answered")])  # fmt: skip
        await settle(pilot)
        stream = app.query_one(AnswerStream)  # finished, still the stream: no table in it
        area = stream.content_region
        await pilot.mouse_down(offset=(area.x + 6, area.y))
        await pilot.hover(offset=(area.x + 5, area.y + 2))
        await pilot.mouse_up(offset=(area.x + 5, area.y + 2))
        await pilot.pause()
        # the character under the pointer is selected, as in any Textual widget
        assert app.screen.get_selected_text() == "paragraph of the answer.\n\nSecond"
