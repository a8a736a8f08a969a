"""A block of chunks fed at once assembles, watches and says what the same chunks
fed one at a time do: the same text, calls and stops, the same events in the same order, only
the deltas in a row joined. And the helpers of the short roads agree with the long ones."""

from __future__ import annotations

import random
from typing import Any

import pytest

from mm_tui.agent.chunk_feed import ChunkFeed
from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WRITING,
    Event,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
)
from mm_tui.agent.loop_detector import TEXT_PERIODS, TEXT_WINDOW, _repeated
from mm_tui.agent.stream import StreamAssembler
from mm_tui.agent.stream_bounds import SAME_CHUNK_LIMIT
from mm_tui.agent.turn_signals import TurnSignals


def text(piece: str, **extra: Any) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": {"content": piece, **extra}}]}


def reasoning(piece: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {"reasoning_content": piece}}]}


def call(arguments: str, call_id: str = "", name: str = "") -> dict[str, Any]:
    function = {"arguments": arguments, **({"name": name} if name else {})}
    fragment = {"index": 0, "function": function, **({"id": call_id} if call_id else {})}
    return {"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}


def finish(reason: str) -> dict[str, Any]:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def joined(events: list[Event]) -> list[Event]:
    """The events with the deltas in a row joined, as a block says them."""
    out: list[Event] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta):
            out[-1] = TextDelta(last.text + event.text)
        elif isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
            out[-1] = ReasoningDelta(last.text + event.text)
        else:
            out.append(event)
    return out


def fed(chunks: list[dict[str, Any]], block: int) -> tuple[list[Event], Any, ChunkFeed]:
    """The events said and what was assembled, the chunks fed `block` at a time."""
    events: list[Event] = []
    assembler = StreamAssembler()
    feed = ChunkFeed(assembler, TurnSignals(events.append), 0.0)
    for at in range(0, len(chunks), block):
        if feed(chunks[at : at + block]):
            break
    calls = [(c.id, c.name, c.arguments) for c in assembler.calls]
    said = (assembler.text, assembler.reasoning, calls, assembler.finish_reason)
    return events, said, feed


STREAM = [
    {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
    reasoning("let me "),
    reasoning("think"),
    text("Here "),
    text("it is", role="assistant"),
    call('{"te', call_id="call_1", name="echo"),
    call('xt": "hi"}'),
    text(" and "),
    text("more"),
    reasoning("hmm"),
    text("."),
    finish("tool_calls"),
    {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 9}},
]


@pytest.mark.parametrize("block", [2, 3, 5, len(STREAM)])
def test_a_block_says_what_its_chunks_one_at_a_time_say_with_the_deltas_joined(
    block: int,
) -> None:
    one_by_one, assembled, _ = fed(STREAM, 1)
    in_blocks, assembled_in_blocks, _ = fed(STREAM, block)

    assert assembled_in_blocks == assembled
    assert joined(in_blocks) == joined(one_by_one)
    if block == len(STREAM):  # one block: each run of deltas is one event
        assert in_blocks == joined(one_by_one) != one_by_one


def test_text_then_a_call_then_text_in_one_block_keep_their_order() -> None:
    events, said, _ = fed(STREAM[3:9], len(STREAM))

    assert events == [
        SpinnerChanged(WRITING),
        TextDelta("Here it is"),
        SpinnerChanged(COMPOSING_TOOL_CALL),
        SpinnerChanged(WRITING),
        TextDelta(" and more"),
    ]
    assert said[:3] == ("Here it is and more", "", [("call_1", "echo", '{"text": "hi"}')])


def test_reasoning_then_text_in_one_block_say_the_spinner_before_each() -> None:
    events, _, _ = fed([reasoning("a"), reasoning("b"), text("c")], 3)
    assert events == [
        SpinnerChanged(THINKING),
        ReasoningDelta("ab"),
        SpinnerChanged(WRITING),
        TextDelta("c"),
    ]


@pytest.mark.parametrize("block", [1, 7, SAME_CHUNK_LIMIT, 1000])
def test_the_same_piece_is_counted_per_chunk_across_and_inside_blocks(block: int) -> None:
    """The stop comes at the chunk that makes SAME_CHUNK_LIMIT, wherever the blocks cut:
    nothing after it is assembled, and the text said is the text assembled."""
    chunks = [text("Intro ")] + [text("again ")] * (SAME_CHUNK_LIMIT + 40)

    events, said, feed = fed(chunks, block)

    assert said[0] == "Intro " + "again " * SAME_CHUNK_LIMIT
    assert feed.runaway is not None
    assert f"same piece of text {SAME_CHUNK_LIMIT} times" in feed.runaway
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == said[0]


def test_an_interrupt_before_a_block_leaves_its_chunks_untouched() -> None:
    events: list[Event] = []
    assembler = StreamAssembler()
    signals = TurnSignals(events.append)
    signals.cancel.set()

    assert ChunkFeed(assembler, signals, 0.0)([text("a"), text("b")])
    assert assembler.text == "" and events == []


@pytest.mark.parametrize(
    "chunk",
    [
        text("a", reasoning_content="b"),
        text("a", tool_calls=[{"index": 0, "function": {"name": "x", "arguments": ""}}]),
        {"choices": [{"delta": {"content": "a"}, "finish_reason": "stop"}]},
        {"choices": [{"delta": {"content": "a"}}], "usage": {"prompt_tokens": 1}},
        {"choices": [{"delta": {"content": "a"}}, {"delta": {"content": "b"}}]},
        {"choices": [{"delta": {"content": 5}}]},
        {"choices": [{"delta": "a"}]},
    ],
)
def test_only_the_usual_chunk_takes_the_short_road(chunk: dict[str, Any]) -> None:
    assembler = StreamAssembler()
    assert assembler.feed_text(chunk) == "" and assembler.text == ""


def _repeated_as_before(tail: str) -> str | None:
    """The pattern search as it was written before `_repeated`: every period in turn."""
    last = tail[-1]
    return next(
        (
            tail[-period:]
            for period in TEXT_PERIODS
            if tail[-1 - period] == last and tail[period:] == tail[:-period]
        ),
        None,
    )


def test_the_pattern_search_finds_what_the_search_of_every_period_found() -> None:
    rng = random.Random(16)
    for _ in range(3000):
        period = rng.choice([rng.randint(1, 300), rng.randint(8, 256)])
        letters = "ab" if rng.random() < 0.5 else "abc d\n"
        unit = "".join(rng.choice(letters) for _ in range(period))
        tail = (unit * (TEXT_WINDOW // period + 2))[-TEXT_WINDOW:]
        if rng.random() < 0.3:  # a slip somewhere: a near-repetition
            at = rng.randrange(TEXT_WINDOW)
            tail = tail[:at] + rng.choice("xyz") + tail[at + 1 :]
        assert _repeated(tail) == _repeated_as_before(tail), (unit, tail)
