"""The numbers a server reports about a call (`usage`) are read defensively: garbage in them is
ignored, never an `internal error`, and the turn, the history and the session's totals stay
right. Over real HTTP (the scripted server sends the usage shapes)."""

from __future__ import annotations

import logging

import pytest

from mm_tui.agent.events import Notice, ToolFinished, Usage
from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

#: case -> a `usage` object a broken or hostile server might send
GARBAGE = {
    "strings": {"prompt_tokens": "lots", "completion_tokens": "12"},
    "negatives": {"prompt_tokens": -5, "completion_tokens": -1},
    "NaN and infinity": {"prompt_tokens": float("nan"), "completion_tokens": float("inf")},
    "huge": {"prompt_tokens": 10**30, "completion_tokens": 1e308},
    "fractions": {"prompt_tokens": 12.5, "completion_tokens": 0.25},
    "nested objects": {"prompt_tokens": {"n": 1}, "completion_tokens": [3]},
    "booleans": {"prompt_tokens": True, "completion_tokens": False},
    "nulls": {"prompt_tokens": None, "completion_tokens": None},
    "garbage details": {
        "prompt_tokens": 40,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": "all of them"},
    },
    "details not an object": {
        "prompt_tokens": 40,
        "completion_tokens": 3,
        "prompt_tokens_details": 7,
    },
}


@pytest.mark.parametrize("case", GARBAGE)
def test_garbage_usage_is_ignored_never_an_internal_error(
    case: str,
    make_agent: AgentFactory,
    model_server: ScriptedServer,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    usage = GARBAGE[case]
    # the `mm_tui` logger stops at itself once the debug log's module is imported (by any
    # earlier test): let it reach pytest's capture for this test
    monkeypatch.setattr(logging.getLogger("mm_tui"), "propagate", True)
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", {"text": "first"})], usage=usage),
        Reply(text="Done.", usage=usage),
    )
    agent, events = make_agent()
    caplog.set_level(logging.DEBUG, logger="mm_tui.agent.usage_report")

    ended = agent.run_turn("go")

    assert ended.reason == "answered", ended.error
    assert agent.messages[-1]["content"] == "Done."
    assert [e.output for e in events.of(ToolFinished)] == ["first"]
    assert not [n.text for n in events.of(Notice) if n.level in ("error", "warning")]
    for counted in events.of(Usage):  # what reaches the faces is a plain count, or nothing
        for value in (counted.prompt_tokens, counted.completion_tokens):
            assert type(value) is int and 0 <= value <= 10**9
    saved = read_session_document(agent.session_path)
    assert_valid_history(saved["messages"])
    totals = saved["usage"]
    assert all(type(v) is int and 0 <= v <= 10**9 for v in totals.values()), totals
    if case not in ("nulls", "garbage details", "details not an object"):  # null: not said
        assert "usage: prompt_tokens" in caplog.text  # the ignored value is logged
