"""The turn loop through the real openai client against the scripted server (SPEC §3)."""

from __future__ import annotations

import json

import pytest

from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WAITING_FOR_MODEL,
    WRITING,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolStarted,
    ToolStatus,
    TurnSummary,
)
from scripted_server import DIALECTS, Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

CALLS = [ToolCall("echo", {"text": "first"}), ToolCall("echo", {"text": "second ✓"})]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_dialect_assembles_the_same_tool_calls(
    dialect: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.dialect = dialect
    model_server.enqueue(Reply(reasoning="I will echo twice.", tool_calls=CALLS, chunk_size=3))
    model_server.enqueue(Reply(text="Both echoed."))
    agent, events = make_agent()

    ended = agent.run_turn("echo two things")

    assert ended.reason == "answered"
    assistant = agent.messages[2]
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in assistant["tool_calls"]
    ]
    assert calls == [("echo", {"text": "first"}), ("echo", {"text": "second ✓"})]
    assert [e.output for e in events.of(ToolFinished)] == ["first", "second ✓"]
    assert "".join(e.text for e in events.of(ReasoningDelta)) == "I will echo twice."
    assert agent.messages[-1] == {"role": "assistant", "content": "Both echoed."}
    summary = events.of(TurnSummary)[0]
    assert summary.commands == 2 and summary.prompt_tokens > 0
    assert_valid_history(agent.messages)


def test_spinner_walks_through_the_spec_states(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(reasoning="hmm", text="Let me look.", tool_calls=CALLS[:1]))
    model_server.enqueue(Reply(text="Done."))
    agent, events = make_agent()

    agent.run_turn("go")

    states = [e.state for e in events.of(SpinnerChanged)]
    assert states[:5] == [WAITING_FOR_MODEL, THINKING, WRITING, COMPOSING_TOOL_CALL, "Running echo"]
    assert states[-1] == ""


def test_reasoning_is_never_sent_back_to_the_model(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(reasoning="secret chain of thought", text="Answer one."))
    model_server.enqueue(Reply(text="Answer two."))
    agent, _ = make_agent()

    agent.run_turn("one")
    agent.run_turn("two")

    second = json.dumps(model_server.requests[1]["messages"])
    assert "secret chain of thought" not in second
    assert "Answer one." in second
    assert agent.messages[2]["reasoning_content"] == "secret chain of thought"


def test_streamed_text_arrives_in_pieces_and_whole(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """Chunks read together are said as one delta; chunks that come apart (here
    0.1 s apart, twice the reading pace) are said apart."""
    answer = "# Title\n\n```python\nprint('hi')\n```\n"
    model_server.enqueue(Reply(text=answer, chunk_size=4, delay=0.1))
    agent, events = make_agent()

    agent.run_turn("show code")

    deltas = events.of(TextDelta)
    assert len(deltas) > 1
    assert "".join(d.text for d in deltas) == answer


def test_tools_are_declared_with_their_schemas(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    agent, _ = make_agent()

    agent.run_turn("hi")

    tools = model_server.requests[0]["tools"]
    assert tools[0]["function"]["name"] == "echo"
    assert tools[0]["function"]["parameters"]["properties"]["text"]["type"] == "string"


def test_max_turns_ends_a_turn_that_keeps_calling_tools(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    for i in range(5):
        model_server.enqueue(Reply(tool_calls=[ToolCall("echo", {"text": f"step {i}"})]))
    agent, events = make_agent(max_turns=3)

    ended = agent.run_turn("loop forever")

    assert ended.reason == "max_turns"
    assert len(model_server.requests) == 3
    assert len(events.of(ToolFinished)) == 3
    assert_valid_history(agent.messages)


def test_unknown_tool_and_bad_json_become_tool_results_with_a_hint(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(
            tool_calls=[ToolCall("ecko", {"text": "x"}), ToolCall("echo", '{"text": "unterminated')]
        )
    )
    model_server.enqueue(Reply(text="sorry"))
    agent, events = make_agent()

    agent.run_turn("go")

    first, second = events.of(ToolFinished)
    assert first.status is ToolStatus.FAILED
    assert 'there is no tool named "ecko". Did you mean "echo"?' in first.output
    assert second.status is ToolStatus.FAILED
    assert "not valid JSON" in second.output
    assert_valid_history(agent.messages)


def test_a_wrongly_cased_tool_name_still_runs_with_a_badge(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("Echo", '```json\n{"text": "hi",}\n```')]))
    model_server.enqueue(Reply(text="ok"))
    agent, events = make_agent()

    agent.run_turn("go")

    finished = events.of(ToolFinished)[0]
    assert finished.status is ToolStatus.DONE and finished.output == "hi"
    started = events.of(ToolStarted)[0]
    assert started.badge == "tool name fixed, repaired JSON"
    assert started.raw == '```json\n{"text": "hi",}\n```'
