"""A prompt count that may leave out a cached prefix is not read as the prompt's size: Ollama
counts only what it evaluated (0 when all was cached); llama-server and vLLM count the whole
prompt and say the cached part. A warm cache gives no false "cutting the conversation"
warning and no false switch to the text protocol; a cold cut still warns."""

from __future__ import annotations

import pytest

from mm_tui.agent.events import Notice
from mm_tui.agent.tools.bash import BashTool
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory

LONG = "explain " + "this please " * 600

#: (dialect, usage of a second turn whose prompt is almost all cached)
WARM = [
    ("ollama", {"prompt_tokens": 0, "completion_tokens": 3}),
    ("ollama", {"prompt_tokens": 14, "completion_tokens": 3}),
    (
        "llamacpp",
        {
            "prompt_tokens": 4000,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 3990},
        },
    ),
    (
        "vllm",
        {
            "prompt_tokens": 4000,
            "completion_tokens": 3,
            "prompt_tokens_details": {"cached_tokens": 3990},
        },
    ),
]


def _warnings(events: object) -> list[str]:
    return [n.text for n in events.of(Notice) if n.level == "warning"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(("dialect", "usage"), WARM)
def test_a_warm_cache_is_no_cut_and_no_dropped_tools(
    make_agent: AgentFactory, model_server: ScriptedServer, dialect: str, usage: dict
) -> None:
    model_server.dialect = dialect
    agent, events = make_agent(tools=[BashTool()], context_window=8192)
    model_server.enqueue(Reply(text="One."), Reply(text="Two.", usage=usage))
    agent.run_turn(LONG)
    agent.run_turn(LONG + " again")
    assert _warnings(events) == []
    assert all("tools" in r for r in model_server.requests)  # never switched to text


@pytest.mark.parametrize("dialect", ["llamacpp", "vllm"])
def test_a_cold_cut_still_warns(
    make_agent: AgentFactory, model_server: ScriptedServer, dialect: str
) -> None:
    model_server.dialect = dialect
    agent, events = make_agent(tools=[BashTool()], context_window=8192)
    model_server.enqueue(Reply(text="One.", usage={"prompt_tokens": 40, "completion_tokens": 3}))
    agent.run_turn(LONG)
    assert any("probably cutting the conversation" in w for w in _warnings(events))


def test_on_ollama_a_first_count_may_be_an_earlier_sessions_warm_cache(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """Ollama counts only what it evaluated; a new session's fixed prompt may already be in
    its cache, so even the first count is not read as a cut, nor as tools dropped."""
    model_server.dialect = "ollama"
    agent, events = make_agent(tools=[BashTool()], context_window=8192)
    model_server.enqueue(Reply(text="One.", usage={"prompt_tokens": 40, "completion_tokens": 3}))
    model_server.enqueue(Reply(text="Two.", usage={"prompt_tokens": 9, "completion_tokens": 3}))
    agent.run_turn(LONG)
    agent.run_turn(LONG + " again")
    assert _warnings(events) == []
    assert all("tools" in r for r in model_server.requests)  # never switched to text


def test_on_ollama_a_cut_is_told_from_the_context_it_runs_the_model_with(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.dialect = "ollama"
    model_server.ollama_loaded = 4096
    agent, events = make_agent(tools=[BashTool()], context_window=8192)
    model_server.enqueue(Reply(text="One.", usage={"prompt_tokens": 40, "completion_tokens": 3}))
    model_server.enqueue(Reply(text="Two.", usage={"prompt_tokens": 9, "completion_tokens": 3}))
    agent.run_turn(LONG)
    agent.run_turn(LONG + " again")
    [warning] = _warnings(events)  # once
    assert warning.startswith(
        "Ollama runs scripted-model with 4096 tokens of context, less than the 8192 of "
        "contextWindow"
    )
