"""The prefix the server reuses, measured from its own counts (OpenAI's
`prompt_tokens_details.cached_tokens`, llama-server's `timings.cache_n`) and shown in the top
line; nothing is shown when the server does not say."""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.agent.prompt_reuse import reuse_of, reuse_percent
from mm_tui.widgets.top_line import cache_text
from scripted_server import Reply, ScriptedServer
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


def test_the_prefix_stays_whole_across_a_shrunk_prompt_and_a_constrained_retry(
    scripted_server_factory, tmp_path
) -> None:
    """The steps that change what is sent (the fixed prompt shrunk on the first turn, a
    retry under a grammar) leave every ordinary request beginning with the one before."""
    from mm_tui.agent.agent import Agent
    from mm_tui.agent.config import Config
    from mm_tui.agent.session import SessionStore
    from scripted_server import ToolCall
    from tests.agent.test_reusable_prefix import assert_each_extends_the_last

    server = scripted_server_factory("llamacpp")
    server.n_ctx = 4096  # small enough that the default prompt is shrunk
    agent = Agent(
        Config(base_url=server.base_url, model="scripted-model", bash_tool=False),
        lambda event: None,
        tmp_path,
        store=SessionStore(tmp_path / "sessions"),
        request_timeout=10.0,
    )
    try:
        server.enqueue(
            Reply(tool_calls=[ToolCall("read_file", '{"path" "a.txt" :: ]]')]),
            Reply(text='{"name": "read_file", "arguments": {"path": "a.txt"}}'),
            Reply(text="Read it."),
            Reply(text="Again."),
        )
        (tmp_path / "a.txt").write_text("hello\n")
        agent.run_turn("read a.txt")
        agent.run_turn("and again")
        requests = server.wait_for_requests(4)
        ordinary = [r for r in requests if "response_format" not in r]
        assert len(ordinary) == 3 and len(requests) == 4
        assert_each_extends_the_last(ordinary)
        assert agent.model_call.fit.short  # the prompt was shrunk on the first turn
        results = [m for m in agent.messages if m["role"] == "tool"]
        assert results and results[0]["content"].startswith("hello")  # the mended call ran
    finally:
        agent.close()
