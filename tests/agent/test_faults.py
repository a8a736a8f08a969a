"""Server faults (SPEC §3): one clear line each, an entry in `errors`, a valid history, and a
next turn that works."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.events import Notice
from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

FAULTS = {
    "cut stream": (
        Reply(text="Half an ans", fault="no_done"),
        "the model's answer was cut off: the stream ended without a finish reason",
    ),
    "error event": (Reply(text="Hello", fault="error_event"), "reported an error mid-stream"),
    "malformed chunk": (Reply(text="Hello", fault="malformed_chunk"), "malformed chunk"),
    "disconnect": (Reply(text="Hello there", fault="disconnect"), "model server"),
    "401": (
        Reply(status=401, error_body={"error": {"message": "bad key"}}),
        "refused the API key (HTTP 401: bad key)",
    ),
    "404": (
        Reply(status=404, error_body={"error": {"message": 'model "x" not found'}}),
        "has no model 'scripted-model' (HTTP 404",
    ),
    "400": (
        Reply(status=400, error_body={"error": {"message": "bad request"}}),
        "rejected the request (HTTP 400: bad request)",
    ),
    "cut mid tool call": (
        Reply(tool_calls=[ToolCall("echo", {"text": "a long argument"})], fault="no_done"),
        "cut off",
    ),
}


@pytest.mark.parametrize("name", FAULTS)
def test_each_fault_gives_one_line_an_error_entry_and_a_valid_history(
    name: str, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    reply, expected = FAULTS[name]
    model_server.enqueue(reply)
    model_server.enqueue(Reply(text="Recovered."))
    agent, events = make_agent()

    ended = agent.run_turn("hello")

    assert ended.reason == "error"
    errors = [n for n in events.of(Notice) if n.level == "error"]
    assert len(errors) == 1 and expected in errors[0].text
    assert "\n" not in errors[0].text and "Traceback" not in errors[0].text
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1]["message"] == errors[0].text
    assert_valid_history(agent.messages)

    again = agent.run_turn("try again")
    assert again.reason == "answered"
    assert agent.messages[-1]["content"] == "Recovered."
    assert_valid_history(agent.messages)


@pytest.mark.parametrize("status", [429, 500, 503])
def test_429_and_5xx_are_retried_three_times_then_reported(
    status: int, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    for _ in range(4):
        model_server.enqueue(Reply(status=status, error_body={"error": {"message": "busy"}}))
    agent, events = make_agent()

    ended = agent.run_turn("hello")

    assert len(model_server.requests) == 4
    assert ended.reason == "error" and "gave up after 3 retries" in (ended.error or "")
    warnings = [n for n in events.of(Notice) if n.level == "warning"]
    assert len(warnings) == 3 and all("retrying" in w.text for w in warnings)
    assert_valid_history(agent.messages)


def test_a_retry_that_succeeds_ends_the_turn_normally(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(status=500, error_body={"error": {"message": "oops"}}))
    model_server.enqueue(Reply(text="Fine now."))
    agent, _ = make_agent()

    assert agent.run_turn("hello").reason == "answered"
    assert agent.messages[-1]["content"] == "Fine now."


def test_a_stalled_server_times_out_with_one_line(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="too late", stall=3.0))
    agent, _ = make_agent(request_timeout=0.5)

    ended = agent.run_turn("hello")

    assert ended.reason == "error"
    assert ended.error == (
        f"the model server at {model_server.base_url} did not answer within 0.5s — "
        "it may still be loading the model; try again"
    )
    assert_valid_history(agent.messages)


def test_an_unreachable_server_names_the_url_and_how_to_set_another(
    make_agent: AgentFactory,
) -> None:
    agent, _ = make_agent(base_url="http://127.0.0.1:9/v1")

    ended = agent.run_turn("hello")

    assert ended.reason == "error"
    assert ended.error is not None
    assert ended.error.startswith("cannot reach the model server at http://127.0.0.1:9/v1")
    assert "--base-url" in ended.error and "OPENAI_BASE_URL" in ended.error


def test_without_a_model_the_first_one_the_server_lists_is_used(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.models = ["gemma3:12b", "qwen3:8b"]
    model_server.enqueue(Reply(text="hi"))
    agent, _ = make_agent(model=None)

    agent.run_turn("hello")

    assert agent.model == "gemma3:12b"
    assert model_server.requests[0]["model"] == "gemma3:12b"


def test_a_server_that_is_not_openai_compatible_is_said_so_not_a_model_named_none(
    model_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mm_tui.agent.agent import Agent
    from mm_tui.agent.config import Config
    from mm_tui.agent.events import TurnEnded

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    url = f"{model_server.root_url}/not-an-api"
    events: list[object] = []
    agent = Agent(Config(base_url=url, lsp_servers=()), events.append, tmp_path, retry_delays=())
    try:
        ended = agent.run_turn("hello")
    finally:
        agent.close()

    assert isinstance(ended, TurnEnded) and ended.reason == "error"
    assert ended.error is not None
    assert ended.error.startswith(
        f"the server at {url} is not OpenAI-compatible: it has no /models (HTTP 404: "
    )
    assert "None" not in ended.error
