"""Bounded streams: an answer or a reasoning that repeats a chunk, repeats a
pattern or passes 4 MB is cut like a runaway tool call, and so is a flood of empty chunks.
Each ends the turn with one line, a session error, a valid history, and the next turn works.
The model talks over real HTTP (the scripted server)."""

from __future__ import annotations

import pytest

from mm_tui.agent.events import Notice, ToolFinished
from mm_tui.agent.session import read_session_document
from mm_tui.agent.stream_bounds import (
    ANSWER_MAX_BYTES,
    EMPTY_CHUNK_LIMIT,
    MAX_CALL_FRAGMENTS,
    MAX_CALLS,
    REASONING_NOTE,
    SAME_CHUNK_LIMIT,
)
from scripted_server import Reply, ScriptedServer, ToolCall, wire
from tests.agent.conftest import AgentFactory, assert_valid_history

STOPPED = "— generation stopped; rephrase the request, or try another model]"


def varied(size: int) -> str:
    """Text that never repeats a pattern: numbered sentences with their squares."""
    words = []
    total = 0
    n = 0
    while total < size:
        line = f"line {n} of the report says {n * n}. "
        words.append(line)
        total += len(line)
        n += 1
    return "".join(words)


#: case -> (the runaway reply, the start of the stop line, where it is filed)
CASES = {
    "the same answer chunk": (
        Reply(text="Intro: " + "again. " * (SAME_CHUNK_LIMIT + 50), chunk_size=7),
        "[error: the model's answer ran away: it sent the same piece of text 256 times in a row "
        '("again. ")',
        "generation",
    ),
    "the same reasoning chunk": (
        Reply(reasoning="hmm, " * (SAME_CHUNK_LIMIT + 50), chunk_size=5, text="late"),
        "[error: the model's reasoning ran away: it sent the same piece of text 256 times",
        "generation",
    ),
    "a repeated reasoning pattern": (
        Reply(reasoning="Wait, let me check the file again. " * 200, chunk_size=16),
        "[error: the model's reasoning ran away: it repeats the same text (",
        "generation",
    ),
    "an answer past 4 MB": (
        Reply(text=varied(ANSWER_MAX_BYTES + 64 * 1024), chunk_size=32 * 1024),
        "[error: the model's answer ran away: it passed 4 MB (",
        "generation",
    ),
    "a reasoning past 4 MB": (
        Reply(reasoning=varied(ANSWER_MAX_BYTES + 64 * 1024), chunk_size=32 * 1024),
        "[error: the model's reasoning ran away: it passed 4 MB (",
        "generation",
    ),
    "a flood of empty chunks": (
        Reply(text="finally", empty_deltas=EMPTY_CHUNK_LIMIT + 100),
        f"[error: the server sent {EMPTY_CHUNK_LIMIT} empty chunks in a row and nothing else",
        "model",
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_a_runaway_stream_ends_the_turn_with_one_line_and_a_valid_history(
    case: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    runaway, start, where = CASES[case]
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", {"text": "first"})]), runaway)
    model_server.enqueue(Reply(text="Recovered."))
    agent, events = make_agent(auto_compact=0)  # 4 MB kept would compact the next turn

    ended = agent.run_turn("go")

    assert ended.reason == "error" and ended.error is not None
    assert ended.error.startswith(start), ended.error
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert errors == [ended.error]
    assert "\n" not in ended.error and len(ended.error) < 400  # one line, no huge value
    if where == "generation":
        assert ended.error.endswith(STOPPED)
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1] == {**saved["errors"][-1], "where": where, "message": ended.error}
    assert_valid_history(saved["messages"])
    assert [e.output for e in events.of(ToolFinished)] == ["first"]

    assert agent.run_turn("again").reason == "answered"
    assert agent.messages[-1]["content"] == "Recovered."
    assert_valid_history(agent.messages)


def test_a_repeating_reasoning_gets_a_note_before_it_is_stopped(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(reasoning="Wait, let me check the file again. " * 200))
    agent, events = make_agent()
    ended = agent.run_turn("go")
    notes = [n.text for n in events.of(Notice) if n.text == REASONING_NOTE]
    assert notes == [REASONING_NOTE] and ended.reason == "error"


def test_a_long_varied_answer_with_a_few_empty_chunks_runs_to_its_end(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = varied(200 * 1024)
    model_server.enqueue(
        Reply(reasoning=varied(20 * 1024), text=text, chunk_size=512, empty_deltas=500)
    )
    agent, events = make_agent()
    ended = agent.run_turn("write the report")
    assert ended.reason == "answered", ended.error
    assert agent.messages[-1]["content"] == text
    assert not [n for n in events.of(Notice) if n.level in ("error", "warning")]


def listing(lines: int) -> str:
    """A long, legitimate answer: a Markdown table of `ls -l`-like rows, every row different."""
    rows = [
        "Here is the whole listing:",
        "",
        "| mode | size | modified | path |",
        "|---|---|---|---|",
    ]
    for n in range(lines):
        size = (n * 7919) % 1_000_003
        day = 1 + n % 28
        rows.append(
            f"| -rw-r--r-- | {size} | 2026-{1 + n % 12:02d}-{day:02d} {n % 24:02d}:{n % 60:02d} "
            f"| src/module_{n // 50:03d}/part_{n:05d}_{(n * n) % 9973:04d}.py |"
        )
    rows.append("")
    rows.append(f"{lines} files in all.")
    return "\n".join(rows)


def test_a_5000_line_listing_streams_whole_and_a_repeating_runaway_is_still_cut(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = listing(5000)
    assert 300 * 1024 < len(text) < ANSWER_MAX_BYTES  # past the old 256 KB cut, far below 4 MB
    model_server.enqueue(Reply(text=text, chunk_size=24))
    # the same listing stuck on one row: cut on repetition long before any size bound
    stuck = listing(300) + "\n| -rw-r--r-- | 1 | 2026-01-01 00:00 | src/again.py |" * 2000
    model_server.enqueue(Reply(text=stuck, chunk_size=24), Reply(text="Recovered."))
    agent, events = make_agent(auto_compact=0)

    ended = agent.run_turn("list every file")
    assert ended.reason == "answered", ended.error
    assert agent.messages[-1]["content"] == text
    assert not [n for n in events.of(Notice) if n.level in ("error", "warning")]

    ended = agent.run_turn("again")
    assert ended.reason == "error" and ended.error is not None
    assert ended.error.startswith("[error: the model's answer ran away: it repeats the same text")
    assert len(agent.messages[-1]["content"]) < len(stuck) // 2
    assert_valid_history(agent.messages)


#: fault -> (the start of its stop line, where it is filed, the chunks it may take at most)
ENDLESS = {
    "endless_new_calls": (
        f"[error: the model's tool calls ran away: the message opened more than {MAX_CALLS}",
        "generation",
        MAX_CALLS + 1,
    ),
    "endless_empty_arguments": (
        f"[error: the server sent {EMPTY_CHUNK_LIMIT} tool-call chunks in a row that add nothing",
        "model",
        EMPTY_CHUNK_LIMIT + 1,
    ),
    "endless_tiny_arguments": (
        "[error: the model's tool calls ran away: the arguments of one came in more than "
        f"{MAX_CALL_FRAGMENTS} pieces",
        "generation",
        MAX_CALL_FRAGMENTS + 2,
    ),
}


@pytest.mark.parametrize("fault", ENDLESS)
def test_a_tool_call_composed_forever_is_cut_with_one_line_within_its_bound(
    fault: str,
    make_agent: AgentFactory,
    model_server: ScriptedServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start, where, most = ENDLESS[fault]
    # the server would go on far past every bound (an old client took it all, never cut)
    monkeypatch.setattr(wire, "ENDLESS_CAP", 2 * most)
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", {"text": "first"})]))
    model_server.enqueue(Reply(text="Composing: ", fault=fault), Reply(text="Recovered."))
    agent, events = make_agent(auto_compact=0)

    ended = agent.run_turn("go")

    assert ended.reason == "error" and ended.error is not None
    assert ended.error.startswith(start), ended.error
    assert "\n" not in ended.error and len(ended.error) < 400
    assert [n.text for n in events.of(Notice) if n.level == "error"] == [ended.error]
    assert [e.output for e in events.of(ToolFinished)] == ["first"]  # the cut call never ran
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1] == {**saved["errors"][-1], "where": where, "message": ended.error}
    assert_valid_history(saved["messages"])
    assert agent.run_turn("again").reason == "answered"
    assert agent.messages[-1]["content"] == "Recovered."
    assert_valid_history(agent.messages)
