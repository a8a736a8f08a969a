"""Every fault of the scripted server at each point of a turn: the turn ends with one
clear line, the session file is valid, and the history works for the next turn."""

from __future__ import annotations

import pytest

from mm_tui.agent.events import Notice, ToolFinished
from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

ECHO = ToolCall("echo", {"text": "a fairly long argument so the stream is cut inside it"})

#: fault name -> how to make a Reply fail with it, given what the reply would have carried
FAULTS = {
    "cut stream": lambda **kw: Reply(fault="no_done", **kw),
    "error event": lambda **kw: Reply(fault="error_event", **kw),
    "malformed chunk": lambda **kw: Reply(fault="malformed_chunk", **kw),
    "disconnect": lambda **kw: Reply(fault="disconnect", **kw),
    "HTTP 401": lambda **kw: Reply(status=401, **kw),
    "HTTP 404": lambda **kw: Reply(status=404, **kw),
    "HTTP 429": lambda **kw: Reply(status=429, **kw),
    "HTTP 500": lambda **kw: Reply(status=500, **kw),
    "stall": lambda **kw: Reply(stall=2.0, **kw),
}

#: point of the turn -> (replies before the faulty one, what the faulty reply carries)
POINTS = {
    "before the first token": ([], {}),
    "mid text": ([], {"text": "Here is a long answer that will be cut somewhere in the middle."}),
    "mid tool call": ([], {"tool_calls": [ECHO], "chunk_size": 4}),
    "between tool calls": ([Reply(tool_calls=[ECHO])], {"text": "After the tool, the answer."}),
}


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("fault", FAULTS)
def test_a_fault_at_any_point_ends_cleanly_and_the_next_turn_works(
    fault: str, point: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    before, carried = POINTS[point]
    model_server.enqueue(*before)
    faulty = FAULTS[fault](**carried)
    retries = 3 if faulty.status in (429, 500) else 0
    model_server.enqueue(*([faulty] * (1 + retries)))
    model_server.enqueue(Reply(text="Recovered."))
    agent, events = make_agent(request_timeout=0.5)

    ended = agent.run_turn("do it")

    assert ended.reason == "error"
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert len(errors) == 1 and "\n" not in errors[0] and len(errors[0]) < 400
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1]["message"] == errors[0]
    assert_valid_history(saved["messages"])
    if point == "between tool calls":
        assert events.of(ToolFinished)[0].output == ECHO.arguments["text"]

    assert agent.run_turn("again").reason == "answered"
    assert agent.messages[-1]["content"] == "Recovered."
    assert_valid_history(agent.messages)
