"""The window while the model streams: whole lines drawn, a heartbeat for a pending
partial line, nothing animated while text flows, the view kept when the person scrolls.

Each test drives the real Agent against the scripted server over HTTP and watches what the
answer has drawn (`AnswerStream.shown`) and the window's state; nothing is timed: the waits
are on explicit conditions, and a pause in a stream is the server's (`Reply.pause`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from textual.pilot import Pilot

from mm_tui.app import MMApp
from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from scripted_server import Reply
from tests.window.conftest import send, wait_for
from tests.window.test_window_conversation import answers, notices, turn_over

pytestmark = pytest.mark.anyio

LINES = [f"Line {n:02d}: the answer goes on, a few words at a time." for n in range(1, 17)]


def stream_of(app: MMApp) -> AnswerStream | None:
    streams = app.query(AnswerStream)
    return streams.last() if streams else None


def text_lines(shown: list[str]) -> list[str]:
    return [line for line in shown if line.strip()]


async def watch(
    pilot: Pilot[Any], condition: Callable[[], bool], what: str, seen: Callable[[], None]
) -> None:
    """Wait for `condition`, calling `seen` at every look (it records what it wants)."""

    def look() -> bool:
        seen()
        return condition()

    await wait_for(pilot, look, what)


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_stream_is_drawn_by_whole_lines_in_order_and_whole_at_the_end(
    model_server: Any, live_app: Any
) -> None:
    text = "\n\n".join(LINES) + "\n"
    model_server.enqueue(Reply(text=text, chunk_size=6, delay=0.02))  # ~150 chunks
    app = live_app()
    states: list[list[str]] = []

    def seen() -> None:
        stream = stream_of(app)
        if stream is not None and (not states or states[-1] != stream.shown):
            states.append(list(stream.shown))

    async with app.run_test(size=(100, 50)) as pilot:
        await send(pilot, "go")
        await watch(pilot, turn_over(app), "the turn ends", seen)
        seen()
    assert text_lines(states[-1]) == LINES  # the whole answer at the end
    assert len(states) >= 3  # lines were drawn while the answer streamed
    for state in states:  # whole lines in order; the last one drawn may be partial
        drawn = text_lines(state)
        assert drawn[:-1] == LINES[: len(drawn) - 1]
        assert LINES[len(drawn) - 1].startswith(drawn[-1])
    # Drawn when lines complete, not per chunk: at most one new state per line drawn.
    assert len(states) <= len(states[-1]) + 2


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_partial_line_with_no_more_tokens_is_drawn_and_an_interrupt_keeps_it(
    model_server: Any, live_app: Any
) -> None:
    head = "Line one.\n\nSecond partial, pending"
    model_server.enqueue(
        Reply(text=head + " and the rest, never sent.", chunk_size=4, delay=0.1,
              pause=120, pause_after=len(head))
    )  # fmt: skip
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "go")
        # The newline came long before: only the heartbeat can draw the line's end.
        await wait_for(
            pilot,
            lambda: (stream := stream_of(app)) is not None and "pending" in " ".join(stream.shown),
            "the pending partial line is drawn while the model says nothing more",
        )
        assert app.turns.running
        await pilot.press("escape")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert "interrupted by the user" in notices(app)
        assert answers(app) == [head]
        stream = stream_of(app)
        assert stream is not None and text_lines(stream.shown) == ["Line one.", head[11:]]


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_nothing_animates_while_text_flows_and_the_spinner_turns_in_a_pause(
    model_server: Any, live_app: Any
) -> None:
    first = "".join(f"word{n} " for n in range(80))
    second = "and after the pause, the end."
    model_server.enqueue(
        Reply(text=first + second, chunk_size=4, delay=0.02, pause=2.5, pause_after=len(first))
    )
    app = live_app()
    looks: list[tuple[bool, int, bool, str]] = []

    def seen() -> None:
        stream = stream_of(app)
        source = stream.text if stream is not None else ""
        looks.append((app.flowing, app.status_line.frame, app.prompt.cursor_blink, source))

    async with app.run_test() as pilot:
        await send(pilot, "go")
        await watch(pilot, turn_over(app), "the turn ends", seen)
        assert answers(app) == [(first + second).strip()]  # the order kept across the pause
        assert app.prompt.cursor_blink and not app.flowing
    stretches: list[list[tuple[bool, int, bool, str]]] = []
    for look in looks:  # runs of looks with the same flowing state
        if stretches and stretches[-1][0][0] == look[0]:
            stretches[-1].append(look)
        else:
            stretches.append([look])
    flowing = [stretch for stretch in stretches if stretch[0][0]]
    assert len(flowing) >= 2  # before the pause, and after it
    for stretch in flowing:
        assert len({frame for _, frame, _, _ in stretch}) == 1  # the spinner stands still
        assert not any(blink for _, _, blink, _ in stretch)  # and so does the cursor
    pause = [
        stretch
        for stretch in stretches
        if not stretch[0][0] and stretch[0][3].startswith(first) and second not in stretch[0][3]
    ]
    assert pause and len({frame for _, frame, _, _ in pause[0]}) >= 3  # it turns while waiting


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_scrolling_up_during_a_stream_shows_earlier_lines_and_stops_following(
    model_server: Any, live_app: Any
) -> None:
    many = [f"Row {n:03d} of a long answer that fills the view." for n in range(1, 91)]
    model_server.enqueue(Reply(text="\n\n".join(many) + "\n", chunk_size=8, delay=0.01))
    app = live_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "go")
        await wait_for(
            pilot,
            lambda: (stream := stream_of(app)) is not None and stream.hidden > 0,
            "the answer outgrows the view and scrolls inside itself",
        )
        stream = stream_of(app)
        assert stream is not None
        last_seen = text_lines(stream.shown)[-1]
        await pilot.press("pageup")
        transcript = app.transcript
        await wait_for(pilot, lambda: stream.hidden == 0, "the lines above come back")
        assert not transcript.following
        await pilot.pause()
        where = transcript.scroll_y
        view = transcript.scrollable_content_region.height
        shown = text_lines(stream.shown)
        assert where + view < transcript.virtual_size.height  # the view is above the end
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert transcript.scroll_y == where  # new lines did not drag the view
        assert not transcript.following
        final = text_lines(stream.shown)
        assert final == many  # the last line drawn then was whole, or the start of its line
        assert shown[:-1] == many[: len(shown) - 1] and many[len(shown) - 1].startswith(shown[-1])
        assert last_seen in many[: len(shown)] or many[len(shown) - 1].startswith(last_seen)


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_resize_mid_stream_wraps_the_answer_again_at_the_new_width(
    model_server: Any, live_app: Any
) -> None:
    long = " ".join(f"word{n}" for n in range(300))
    model_server.enqueue(Reply(text=long + "\n\nThe end.\n", chunk_size=6, delay=0.01))
    app = live_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "go")
        await wait_for(
            pilot,
            lambda: (stream := stream_of(app)) is not None and len(stream.shown) > 4,
            "a few lines are drawn",
        )
        await pilot.resize_terminal(60, 30)
        await wait_for(pilot, turn_over(app), "the turn ends")
        stream = stream_of(app)
        assert stream is not None
        width = stream.content_region.width
        drawn = text_lines(stream.shown)
        assert width < 60 and all(len(line) <= width for line in drawn)
        assert " ".join(drawn[:-1]) == long and drawn[-1] == "The end."


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_stream_cut_without_a_finish_reason_draws_the_partial_line_it_got(
    model_server: Any, live_app: Any
) -> None:
    text = "Partial answer that the server cuts somewhere in the middle of this line"
    model_server.enqueue(Reply(text=text, chunk_size=4, delay=0.02, fault="no_done"))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "go")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert any("without a finish reason" in notice for notice in notices(app))
        (got,) = answers(app)
        assert got and text.startswith(got) and got != text
        stream = stream_of(app)
        assert stream is not None and text_lines(stream.shown) == [got]


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
async def test_a_code_fence_and_emphasis_open_across_a_pause_end_right(
    model_server: Any, live_app: Any
) -> None:
    text = "Code:\n\n```python\ndef f():\n    return 1\n```\n\nAfter *it* ends.\n"
    model_server.enqueue(
        Reply(text=text, chunk_size=3, delay=0.02, pause=1.5, pause_after=text.index("return"))
    )
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "go")
        await wait_for(
            pilot,
            lambda: (
                (stream := stream_of(app)) is not None
                and any("def f():" in line for line in stream.shown)
            ),
            "the open fence is drawn while the stream pauses in it",
        )
        await wait_for(pilot, turn_over(app), "the turn ends")
        stream = stream_of(app)
        assert stream is not None
        assert [line.strip() for line in text_lines(stream.shown)] == [
            "Code:", "def f():", "return 1", "After it ends."
        ]  # fmt: skip


async def test_while_the_model_thinks_the_spinner_stands_still_and_the_time_goes_on(
    model_server: Any, live_app: Any
) -> None:
    reasoning = "".join(f"thought {n}, " for n in range(120))  # ~3.4 s at this pace
    model_server.enqueue(Reply(reasoning=reasoning, text="Done.", chunk_size=4, delay=0.01))
    app = live_app()
    looks: list[tuple[int, str]] = []

    def seen() -> None:
        if app.flowing and app.status_line.state == "Thinking":
            looks.append((app.status_line.frame, app.status_line.elapsed))

    async with app.run_test() as pilot:
        await send(pilot, "go")
        await watch(pilot, turn_over(app), "the turn ends", seen)
        assert answers(app) == ["Done."]
    assert len({frame for frame, _ in looks}) == 1  # the spinner stood still
    assert len({elapsed for _, elapsed in looks}) >= 2  # the turn's time moved on
