"""Deeply nested JSON: in a tool call's arguments, in a call written in the text, or
in a plain answer, it is a plain tool error or plain text — never a RecursionError — and the
history and the session file stay valid for the next turn. Over real HTTP."""

from __future__ import annotations

import pytest

from mm_tui.agent.events import ToolFinished, ToolStatus
from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

NESTED_ERROR = (
    "[error: the arguments of echo are not valid JSON (nested too deeply) — call it again with "
    "one JSON object holding the fields of its schema]"
)


def nested(levels: int) -> str:
    """`{"k0": [{"k1": [ … "x" … ]}]}`: two levels of nesting per key, no repeated pattern
    until the closing brackets."""
    return "".join(f'{{"k{n}": [' for n in range(levels)) + '"x"' + "]}" * levels


def text_call(levels: int) -> str:
    return '<tool_call>{"name": "echo", "arguments": {"text": ' + nested(levels) + "}}</tool_call>"


#: case -> (the dialect, the reply carrying the nesting)
CASES = {
    "native arguments 2,000 deep": (
        "ollama",
        Reply(tool_calls=[ToolCall("echo", '{"text": ' + nested(1000) + "}")]),
    ),
    "native arguments 10,000 deep": (
        "ollama",
        Reply(tool_calls=[ToolCall("echo", '{"text": ' + nested(5000) + "}")]),
    ),
    "a call in the text 2,000 deep": ("openai", Reply(text=text_call(1000), chunk_size=512)),
}


@pytest.mark.parametrize("case", CASES)
def test_deeply_nested_arguments_are_a_plain_tool_error(
    case: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    dialect, reply = CASES[case]
    model_server.dialect = dialect
    model_server.enqueue(reply, Reply(text="I will not nest."), Reply(text="Recovered."))
    agent, events = make_agent(yolo=True, auto_compact=0)

    ended = agent.run_turn("go")

    assert ended.reason == "answered", ended.error
    [finished] = events.of(ToolFinished)
    assert (finished.status, finished.output) == (ToolStatus.FAILED, NESTED_ERROR)
    assert_valid_history(read_session_document(agent.session_path)["messages"])
    assert agent.run_turn("again").reason == "answered"
    assert agent.messages[-1]["content"] == "Recovered."
    assert_valid_history(agent.messages)


def test_deeply_nested_json_in_an_answer_is_just_text(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = "Here it is:\n```json\n" + nested(1000) + "\n```"
    model_server.enqueue(Reply(text=text, chunk_size=512), Reply(text="Recovered."))
    agent, events = make_agent(yolo=True, auto_compact=0)
    assert agent.run_turn("go").reason == "answered"
    assert not events.of(ToolFinished) and agent.messages[-1]["content"] == text
    assert agent.run_turn("again").reason == "answered"
    assert_valid_history(read_session_document(agent.session_path)["messages"])
