"""The last rung: a call no repair reads is asked of the same server once more with the call's
schema as a grammar (`response_format` json_schema), and runs when the server answers a call
that fits; a server that refuses the grammar is remembered, and the model is told as before.

Real HTTP to the scripted server, which reads the grammar as each dialect does and holds its
scripted answer to it (an answer outside the schema would fail the test loudly).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mm_tui.agent.constrained_retry import BADGE_CONSTRAINED, RETRY_ROOM, ConstrainedRetry
from mm_tui.agent.events import Notice, ToolFinished, ToolStarted
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory

UNREADABLE = '{"text" "hi" :: ]]'  # no repair reads it
FITTING = json.dumps({"name": "echo", "arguments": {"text": "hi"}})


def schema_sent(request: dict[str, Any]) -> dict[str, Any] | None:
    response_format = request.get("response_format") or {}
    return (response_format.get("json_schema") or {}).get("schema")


@pytest.mark.parametrize("dialect", ["llamacpp", "vllm", "lmstudio", "ollama", "openai"])
def test_an_unreadable_call_is_asked_again_under_its_schema_and_then_runs(
    make_agent: AgentFactory, model_server: ScriptedServer, dialect: str
) -> None:
    model_server.dialect = dialect
    agent, recorder = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text=FITTING),
        Reply(text="Echoed."),
    )
    ended = agent.run_turn("echo hi")
    assert ended.reason == "answered"
    requests = model_server.wait_for_requests(3)
    assert len(requests) == 3
    retry = requests[1]
    schema = schema_sent(retry)
    assert schema is not None and model_server.grammars[1] == schema
    assert schema["properties"]["name"]["enum"] == ["echo"]
    assert schema["properties"]["arguments"]["properties"] == {"text": {"type": "string"}}
    assert "tools" not in retry  # llama-server refuses a grammar beside tools
    assert "# Tools" in retry["messages"][0]["content"]  # so they are described instead
    finished = recorder.of(ToolFinished)
    assert [f.output for f in finished] == ["hi"]
    started = recorder.of(ToolStarted)
    assert BADGE_CONSTRAINED in started[0].badge
    assert any("asked again with its schema" in n.text for n in recorder.of(Notice))
    call = agent.messages[2]["tool_calls"][0]
    assert json.loads(call["function"]["arguments"]) == {"text": "hi"}
    assert "response_format" not in requests[2]  # the grammar was for the retry only


def test_a_server_that_refuses_the_grammar_is_remembered_and_the_model_told(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.grammar = "refuse"
    agent, recorder = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text="Gave up."),
    )
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(4)
    assert len(requests) == 4  # call, refused retry, call again (no retry), answer
    assert [schema_sent(r) is not None for r in requests] == [False, True, False, False]
    outputs = [f.output for f in recorder.of(ToolFinished)]
    assert len(outputs) == 2
    assert all("are not valid JSON" in output for output in outputs)
    notices = [n.text for n in recorder.of(Notice)]
    assert sum("refused a JSON-schema grammar" in text for text in notices) == 1


def test_never_more_than_one_retry_for_one_reply(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.dialect = "llamacpp"
    agent, recorder = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE), ToolCall("echo", "text=hi, and more")]),
        Reply(text=FITTING),
        Reply(text="Done."),
    )
    agent.run_turn("echo twice")
    requests = model_server.wait_for_requests(3)
    assert len(requests) == 3
    assert [schema_sent(r) is not None for r in requests] == [False, True, False]
    outputs = [f.output for f in recorder.of(ToolFinished)]
    assert outputs[0] == "hi"
    assert "are not valid JSON" in outputs[1]


def test_an_answer_outside_the_schema_leaves_the_model_told(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """A server that ignores the field answers what it likes: one retry, then the old way."""
    model_server.dialect = "vllm"
    model_server.grammar = "ignore"
    agent, recorder = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text="Sorry, here it is: echo hi"),
        Reply(text="Done."),
    )
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(3)
    assert len(requests) == 3
    assert "are not valid JSON" in recorder.of(ToolFinished)[0].output
    assert any("ignored a JSON-schema grammar" in n.text for n in recorder.of(Notice))


def test_json_that_is_no_call_leaves_the_model_told_and_the_server_asked_again(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """JSON of another shape may be a grammar the model filled oddly: the server keeps its
    chance (only free text shows a dropped grammar)."""
    model_server.dialect = "vllm"
    model_server.grammar = "ignore"
    agent, recorder = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text='{"command": "echo hi"}'),
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text=FITTING),
        Reply(text="Done."),
    )
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(5)
    assert [schema_sent(r) is not None for r in requests] == [False, True, False, True, False]
    outputs = [f.output for f in recorder.of(ToolFinished)]
    assert "are not valid JSON" in outputs[0] and outputs[1] == "hi"
    assert any("did not give a readable call" in n.text for n in recorder.of(Notice))


def test_an_ollama_older_than_structured_outputs_is_not_asked(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.dialect = "ollama"
    model_server.ollama_version = "0.4.7"
    agent, recorder = make_agent()
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", UNREADABLE)]), Reply(text="Done."))
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(2)
    assert len(requests) == 2 and all(schema_sent(r) is None for r in requests)
    assert ("GET", "/api/version", None) in model_server.other_requests
    assert "are not valid JSON" in recorder.of(ToolFinished)[0].output


def test_an_answer_cut_at_the_token_limit_is_said_so_and_the_server_kept(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """A grammar holds the shape, not the length: a tiny model under it can run a string on
    until the token limit (seen on a real llama-server); that is no dropped grammar."""
    model_server.dialect = "llamacpp"
    model_server.grammar = "ignore"  # the scripted server cannot cut a held reply itself
    agent, recorder = make_agent()
    cut = '{"name": "echo", "arguments": {"text": "' + "hi " * 40
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text=cut, finish_reason="length"),
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]),
        Reply(text=FITTING),
        Reply(text="Done."),
    )
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(5)
    assert [schema_sent(r) is not None for r in requests] == [False, True, False, True, False]
    said = [n.text for n in recorder.of(Notice)]
    assert any("was cut at the token limit" in text for text in said), said
    outputs = [f.output for f in recorder.of(ToolFinished)]
    assert "are not valid JSON" in outputs[0] and outputs[1] == "hi"


def test_the_retry_bounds_its_answer_to_about_the_call_first_written(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """A grammar holds the shape, not the size: under one a small model can run a string or
    an array on until the context is full (a real llama-server did, with no `-n`)."""
    model_server.dialect = "llamacpp"
    agent, _ = make_agent()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", UNREADABLE)]), Reply(text=FITTING), Reply("Done.")
    )
    agent.run_turn("echo hi")
    requests = model_server.wait_for_requests(3)
    assert "max_tokens" not in requests[0] and "max_tokens" not in requests[2]
    assert requests[1]["max_tokens"] == len(UNREADABLE) + RETRY_ROOM


def test_a_smaller_bound_of_the_request_stays() -> None:
    request = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 40}
    tools = [{"type": "function", "function": {"name": "echo", "parameters": {}}}]
    assert ConstrainedRetry.request(request, tools, "echo", 500)["max_tokens"] == 40
    del request["max_tokens"]
    assert ConstrainedRetry.request(request, tools, "echo", 500)["max_tokens"] == 500 + RETRY_ROOM
