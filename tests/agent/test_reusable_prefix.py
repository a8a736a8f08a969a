"""A prefix the server can reuse: each request begins with the previous request byte for byte
(the system prompt, the tools, every message sent before), so llama-server, Ollama and vLLM
keep the work of the prefix in their cache instead of reading the whole conversation again.

Checked on the requests the scripted server received, turn after turn, in both tool modes.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory


def wire(message: dict[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, ensure_ascii=False)


def assert_each_extends_the_last(requests: list[dict[str, Any]]) -> None:
    """Every message sent before comes again unchanged; only the last one sent may grow, and
    only at its end: in text mode a tool's results are a user message, and the person's next
    message joins it (templates that demand alternation refuse two user messages in a row),
    which keeps the rendered prompt's text up to there as it was."""
    for before, after in zip(requests, requests[1:], strict=False):
        assert json.dumps(after.get("tools")) == json.dumps(before.get("tools"))
        sent, now = before["messages"], after["messages"]
        assert len(now) >= len(sent)
        *kept, last = sent
        assert [wire(m) for m in now[: len(kept)]] == [wire(m) for m in kept]
        grown = now[len(kept)]
        if wire(grown) != wire(last):
            assert grown["role"] == last["role"] == "user", (last, grown)
            assert grown["content"].startswith(last["content"] + "\n"), (last, grown)


@pytest.mark.parametrize("tool_calls", ["native", "text"])
def test_every_request_begins_with_the_one_before(
    make_agent: AgentFactory, model_server: ScriptedServer, tool_calls: str
) -> None:
    agent, _ = make_agent(tool_calls=tool_calls)
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", {"text": "one"})]),
        Reply(tool_calls=[ToolCall("echo", {"text": "two"}), ToolCall("echo", {"text": "3"})]),
        Reply(text="Echoed three times."),
        Reply(tool_calls=[ToolCall("echo", {"text": "again"})]),
        Reply(text="And once more."),
    )
    agent.run_turn("echo things")
    agent.run_turn("once more")
    requests = model_server.wait_for_requests(5)
    assert_each_extends_the_last(requests)
    assert requests[0]["messages"][0]["role"] == "system"


@pytest.mark.parametrize("tool_calls", ["native", "text"])
def test_a_turn_that_failed_after_a_call_leaves_the_prefix_whole(
    make_agent: AgentFactory, model_server: ScriptedServer, tool_calls: str
) -> None:
    """The history ends with a tool's result, then the person writes again: the next request
    still begins with everything sent before (no message joined into one already sent)."""
    agent, _ = make_agent(tool_calls=tool_calls)
    broken = Reply(status=400, error_body={"error": {"message": "bad request"}})
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("echo", {"text": "one"})]), broken, Reply(text="Fine now.")
    )
    agent.run_turn("echo it")
    agent.run_turn("try again")
    requests = model_server.wait_for_requests(3)
    assert_each_extends_the_last(requests)
