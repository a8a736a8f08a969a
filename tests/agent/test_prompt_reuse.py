"""The prefix the server reuses, measured from its own counts (OpenAI's
`prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`) and shown in the top
line; nothing is shown when the server does not say."""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.agent.prompt_reuse import reuse_of, reuse_percent
from mm_tui.scripted_server import Reply, ScriptedServer
from mm_tui.widgets.top_line import cache_text
from tests.agent.conftest import AgentFactory


def usage(prompt: int, cached: int | None) -> dict[str, Any]:
    counts: dict[str, Any] = {
        "prompt_tokens": prompt,
        "completion_tokens": 5,
        "total_tokens": prompt + 5,
    }
    if cached is not None:
        counts["prompt_tokens_details"] = {"cached_tokens": cached}
    return counts


@pytest.mark.parametrize("dialect", ["vllm", "llamacpp", "openai"])
def test_the_reuse_the_server_counts_is_shown_after_each_call(
    make_agent: AgentFactory, model_server: ScriptedServer, dialect: str
) -> None:
    model_server.dialect = dialect
    agent, _ = make_agent()
    assert agent.top_line().cache is None  # nothing said yet
    model_server.enqueue(Reply(text="One.", usage=usage(1000, 0)))
    agent.run_turn("first")
    assert agent.top_line().cache == 0
    model_server.enqueue(Reply(text="Two.", usage=usage(1000, 920)))
    agent.run_turn("second")
    assert agent.top_line().cache == 92


def test_llama_server_timings_alone_tell_the_reuse(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """Builds that send no `prompt_tokens_details` still send `timings` (cache_n 0 here)."""
    model_server.dialect = "llamacpp"
    agent, _ = make_agent()
    model_server.enqueue(Reply(text="One.", usage=usage(1000, None)))
    agent.run_turn("first")
    assert agent.top_line().cache == 0


def test_a_server_that_says_nothing_shows_nothing(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.dialect = "ollama"
    agent, _ = make_agent()
    model_server.enqueue(Reply(text="One.", usage=usage(1000, None)))
    agent.run_turn("first")
    assert agent.top_line().cache is None


def test_reuse_is_read_from_either_count_and_bad_values_are_dropped() -> None:
    llama = {"choices": [], "timings": {"cache_n": 8500, "prompt_n": 1500, "predicted_n": 20}}
    assert reuse_of(llama) == (8500, 10000)
    openai_shape = {"usage": usage(3261, 3072)}
    assert reuse_of(openai_shape) == (3072, 3261)
    for bad in (True, -1, "12", None, [3]):
        assert reuse_of({"timings": {"cache_n": bad, "prompt_n": bad}}) is None
        assert (
            reuse_of(
                {"usage": {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": bad}}}
            )
            is None
        )
    assert reuse_percent((920, 1000)) == 92
    assert reuse_percent(None) is None
    assert cache_text(92) == "cache 92%"
