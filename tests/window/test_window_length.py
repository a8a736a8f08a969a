"""A long session stays light: old blocks leave the layout and come back on scroll,
huge lists and tables in an answer are one widget each. Nothing here is timed (bench/ is)."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from textual.app import App, ComposeResult

from mm_tui.agent.events import (
    AssistantMessageDone,
    TextDelta,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
)
from mm_tui.widgets.answer_blocks import AnswerBlock, answer_block
from mm_tui.widgets.blocks import UserMessage
from mm_tui.widgets.fast_markdown.long_blocks import ListLines, TableLines
from mm_tui.widgets.tool_row import ToolRow
from mm_tui.widgets.transcript import FOLLOW_MARGIN, FOLLOW_SLACK, LIVE_MOST, OPEN_MOUNTED
from scripted_server import Reply, ToolCall
from tests.window.conftest import play, send, settle, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio

TURNS = 60  # six blocks a turn: 360 blocks, more than the layout keeps


def turn(n: int) -> list[Any]:
    events: list[Any] = [TurnStarted(f"turn {n}")]
    for k in range(3):
        call = f"c{n}_{k}"
        events.append(ToolStarted(call, "bash", {"command": f"echo {n} {k}"}, ""))
        events.append(ToolFinished(call, "bash", "", ToolStatus.DONE, 0.1, f"{n} {k}\n"))
    events += [TextDelta(f"Answer **{n}**."), AssistantMessageDone(f"Answer **{n}**.", "")]
    events += [TurnSummary(3, 0, 0, 0, 1.0, 10, 5), TurnEnded("answered")]
    return events


async def test_a_long_session_keeps_its_newest_blocks_mounted_and_exports_every_one(
    still_app: Any,
) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [event for n in range(TURNS) for event in turn(n)])
        transcript = app.transcript
        assert len(transcript.children) <= LIVE_MOST
        exported = transcript.to_markdown()
        assert [f"> turn {n}" in exported for n in range(TURNS)] == [True] * TURNS
        assert (
            exported.index("> turn 0") < exported.index("Answer **0**") < exported.index("> turn 1")
        )
        last = list(transcript.rows.values())[-1]
        assert (last.call_id, last.status) == (f"c{TURNS - 1}_2", ToolStatus.DONE)


async def test_scrolling_back_to_the_top_brings_the_first_turn_back_in_order(
    still_app: Any,
) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [event for n in range(TURNS) for event in turn(n)])
        transcript = app.transcript
        exported = transcript.to_markdown()

        def first_message() -> str:
            first = transcript.children[0]
            return first.text if isinstance(first, UserMessage) else ""

        for _ in range(10):  # each visit to the top brings a batch back
            if first_message() == "turn 0":
                break
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, lambda: transcript.scroll_y > 0 or first_message() == "turn 0",
                           "a batch comes back above, the view kept")  # fmt: skip
        assert first_message() == "turn 0"
        assert transcript.to_markdown() == exported
        assert "c0_0" in transcript.rows


async def test_the_top_reached_while_blocks_below_come_back_brings_the_batch_above(
    still_app: Any,
) -> None:
    """After a few visits to the top, blocks far below the view left (records below). The
    person scrolls down near them, which asks for them back, and at once back to the top:
    that scroll came while the column was busy and asked for nothing, so the view sat at the
    top and no older blocks came back until the person scrolled away and up again (seen as
    a flaky test of a flood of rows, whose scrolls met a revive below)."""
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [event for n in range(TURNS) for event in turn(n)])
        transcript = app.transcript

        def below() -> int:
            return len(transcript._below)  # pyright: ignore[reportPrivateUsage]

        def first_row() -> str:
            rows = (child for child in transcript.children if isinstance(child, ToolRow))
            return next(rows).call_id

        for _ in range(10):  # each visit to the top brings a batch back, until some leave below
            if below():
                break
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, lambda: transcript.scroll_y > 0,
                           "a batch comes back above, the view kept")  # fmt: skip
        assert below(), "no blocks left below the view"
        await settle(pilot)
        before, height = first_row(), transcript.size.height
        near_below = transcript._gap_y() - 2 * height + 1  # pyright: ignore[reportPrivateUsage]
        assert 0 < near_below < transcript.max_scroll_y
        transcript.scroll_to(y=near_below, animate=False, immediate=True)
        transcript.scroll_home(animate=False, immediate=True)  # before that revive even began
        await wait_for(pilot, lambda: first_row() != before and transcript.scroll_y > 0,
                       "the top reached meanwhile brings the next batch back")  # fmt: skip
        assert transcript.to_markdown().count("> turn 0") == 1


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_an_answer_of_hundreds_of_list_items_is_one_widget_showing_its_end(
    still_app: Any,
) -> None:
    items = "".join(f"- item {n}: passed\n" for n in range(1, 301))
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [TurnStarted("list"), TextDelta("All:\n\n" + items),
                           AssistantMessageDone(items, ""), TurnEnded("answered")])  # fmt: skip
        await wait_for(pilot, lambda: "item 300: passed" in _screen(app), "the end shows")
        # whole in one delta, ended before it was drawn: Textual's Markdown, one ListLines
        (answer,) = app.query(AnswerBlock)
        assert [type(child) for child in answer.children][-1:] == [ListLines]  # after "All:"


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_whole_answer_of_hundreds_of_list_items_is_one_list_widget() -> None:
    items = "".join(f"- item {n}: passed\n" for n in range(1, 301))
    app = _AnswerApp(answer_block("All:\n\n" + items))  # a replayed or revived answer
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: bool(app.query(ListLines)), "the list is drawn")
        (lines,) = app.query(ListLines)
        assert [symbol for symbol, _ in lines.items] == ["• "] * 300
        assert lines.items[-1][1].plain == "item 300: passed"


class _AnswerApp(App[None]):
    def __init__(self, answer: AnswerBlock) -> None:
        super().__init__()
        self.answer = answer

    def compose(self) -> ComposeResult:
        yield self.answer


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_an_answer_with_a_table_of_hundreds_of_rows_is_one_widget(still_app: Any) -> None:
    table = "| # | name |\n|---|---|\n" + "".join(f"| {n} | case {n} |\n" for n in range(200))
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [TurnStarted("table"), TextDelta(table),
                           AssistantMessageDone(table, ""), TurnEnded("answered")])  # fmt: skip
        # streamed as lines, then (a table) handed to Textual's Markdown: one TableLines
        await wait_for(pilot, lambda: bool(app.query(TableLines)), "the table is drawn")
        (lines,) = app.query(TableLines)
        assert [cell.plain for cell in lines.rows[0]] == ["#", "name"]
        assert [cell.plain for cell in lines.rows[-1]] == ["199", "case 199"]
        await wait_for(pilot, lambda: "case 199" in _screen(app), "the last row shows")


def _screen(app: Any) -> str:
    """The text on screen, as the screenshot has it."""
    svg = re.sub(r"<[^>]+>", "", app.export_screenshot())
    return html.unescape(svg).replace("\xa0", " ")


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
@pytest.mark.parametrize("kind", ["list", "table"])
async def test_dragging_over_a_huge_list_or_table_selects_and_copies_its_lines(
    still_app: Any, kind: str
) -> None:
    if kind == "list":
        text = "All:\n\n" + "".join(f"- item {n}: passed\n" for n in range(1, 5001))
    else:
        text = "| # | name |\n|---|---|\n" + "".join(f"| {n} | case {n} |\n" for n in range(5000))
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(pilot, [TurnStarted("all"), TextDelta(text),
                           AssistantMessageDone(text, ""), TurnEnded("answered")])  # fmt: skip
        block_type = ListLines if kind == "list" else TableLines
        await wait_for(pilot, lambda: bool(app.query(block_type)), "the block is drawn")
        await settle(pilot)
        block = app.query_one(block_type)
        area = block.content_region  # on screen; its top is far above the view
        top, bottom = 5, 8  # screen rows, from the 3rd character to the 7th (the one under
        # the pointer is selected, as in any Textual widget)
        await pilot.mouse_down(offset=(area.x + 2, top))
        await pilot.hover(offset=(area.x + 6, bottom))
        await pilot.mouse_up(offset=(area.x + 6, bottom))
        await pilot.pause()
        shown = [block._lines[row - area.y].plain for row in range(top, bottom + 1)]
        expected = "\n".join([shown[0][2:], *shown[1:-1], shown[-1][:7]])
        assert "case" in expected or "item" in expected
        assert app.screen.get_selected_text() == expected


def many_quick_calls(model_server: Any, live_app: Any, calls: int) -> Any:
    """A window whose next turn is `calls` model calls of 4 quick commands each (all allowed),
    then the answer "All done."."""
    for n in range(calls):
        model_server.enqueue(Reply(tool_calls=[
            ToolCall("bash", {"command": f"echo step-{n}-{k}"}) for k in range(4)
        ]))  # fmt: skip
    model_server.enqueue(Reply(text="All done."))
    return live_app(permissions="allow", max_turns=calls + 5)


async def test_a_turn_of_many_quick_calls_shows_every_row_in_order_once_it_ends(
    model_server: Any, live_app: Any
) -> None:
    """Rows that flood in are taken in batches (event_bridge.TakePace): none is lost, none
    comes twice, each ends done, in the order of the calls, the answer after them."""
    calls = 45  # 180 rows: more than the layout keeps, so some leave it while the turn runs
    app = many_quick_calls(model_server, live_app, calls)
    async with app.run_test() as pilot:
        await send(pilot, "go")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await settle(pilot)
        blocks = app.transcript.blocks_in_order()
        rows = [block for block in blocks if getattr(block, "call_id", None) is not None]
        expected = [f"call_{n + 1:03d}_{k + 1}" for n in range(calls) for k in range(4)]
        assert [row.call_id for row in rows] == expected  # pyright: ignore[reportAttributeAccessIssue]
        assert {row.status for row in rows} == {ToolStatus.DONE}  # pyright: ignore[reportAttributeAccessIssue]
        assert isinstance(blocks[-2], AnswerBlock) and blocks[-2].source.strip() == "All done."


async def test_a_followed_flood_of_rows_lays_out_only_about_a_view_and_loses_none(
    model_server: Any, live_app: Any
) -> None:
    """While the person follows the bottom of a turn of many quick calls, each take leaves
    mounted the blocks of the view and a few lines above it (and the few gathered before
    they leave together), not hundreds: every layout walks them all. Every row is still
    there, in order: in the export, and coming back batch by batch on scrolling to the top."""
    calls = 50  # 200 rows, ten views of them
    app = many_quick_calls(model_server, live_app, calls)
    async with app.run_test() as pilot:
        transcript = app.transcript
        mounted: list[int] = []  # after each take's frame
        blinks: list[bool] = []  # the prompt's cursor then, while the turn runs
        drawn = app.pace.drawn

        def counted() -> None:
            mounted.append(len(transcript.children))
            if app.turns.running:
                blinks.append(app.prompt.cursor_blink)
            drawn()

        app.pace.drawn = counted
        await send(pilot, "go")
        await wait_for(pilot, turn_over(app), "the turn ends")
        await settle(pilot)
        assert transcript.following
        most = max(OPEN_MOUNTED, transcript.size.height + FOLLOW_MARGIN) + FOLLOW_SLACK
        assert mounted and max(mounted) <= most, (mounted, most)
        # over its share of the time, the window stops animating (and ticks slower)
        assert False in blinks, blinks

        def row_at_top() -> ToolRow:
            top = transcript.scroll_y
            rows = [row for row in transcript.children if isinstance(row, ToolRow)]
            return next(row for row in rows if row.virtual_region.bottom > top)

        seen = row_at_top()
        below_top = seen.virtual_region.y - transcript.scroll_y
        await pilot.press("pageup")  # a batch comes back first: still a whole page up
        await wait_for(pilot, lambda: row_at_top() is not seen, "the page turns")
        await settle(pilot)
        page = transcript.scrollable_content_region.height
        assert seen.virtual_region.y - transcript.scroll_y == below_top + page

        steps = [f"step-{n}-{k}" for n in range(calls) for k in range(4)]
        exported = transcript.to_markdown()
        places = [exported.find(step) for step in steps]
        assert -1 not in places and places == sorted(places)
        assert places[-1] < exported.index("All done.")
        ids = [f"call_{n + 1:03d}_{k + 1}" for n in range(calls) for k in range(4)]

        def mounted_ids() -> list[str]:
            return [row.call_id for row in transcript.children if isinstance(row, ToolRow)]

        def first_message() -> str:
            first = transcript.children[0]
            return first.text if isinstance(first, UserMessage) else ""

        for _ in range(20):  # each visit to the top brings a batch back, in order
            shown = mounted_ids()
            start = ids.index(shown[0])
            assert shown == ids[start : start + len(shown)]
            if first_message() == "go":
                break
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, lambda: transcript.scroll_y > 0 or first_message() == "go",
                           "a batch comes back above, the view kept")  # fmt: skip
        assert first_message() == "go" and mounted_ids()[0] == ids[0]
        assert transcript.to_markdown() == exported
