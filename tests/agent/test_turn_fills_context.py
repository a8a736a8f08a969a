"""Automatic compaction when the current turn alone fills the context: nothing older can be
summarised, so it is said once in the turn (with what helps), not twice at every model call."""

from __future__ import annotations

import random

from mm_tui.agent.compaction import TURN_FILLS_CONTEXT
from mm_tui.agent.context import RAISE_ONLY
from mm_tui.agent.events import Notice
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory


def big(seed: str) -> str:
    """~150 tokens of varied words (a repeating pattern would be stopped as a runaway)."""
    words = random.Random(seed).choices(["alpha", "beta", "gamma", "delta", "omega", "zeta"], k=100)
    return " ".join(words)


def test_a_turn_that_alone_fills_the_context_is_said_once_not_at_each_call(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = make_agent(context_window=400)
    model_server.enqueue(
        *(Reply(tool_calls=[ToolCall("echo", {"text": big(f"{n}")})]) for n in range(8)),
        Reply(text="done"),
    )
    ended = agent.run_turn("go through it all")
    assert ended.reason == "answered", ended
    notices = [n.text for n in events.of(Notice)]
    full = [text for text in notices if text.endswith(TURN_FILLS_CONTEXT)]
    assert len(full) == 1, notices
    assert " of 400 tokens used by this turn alone" in full[0]
    assert not [t for t in notices if "— compacting" in t or "nothing to compact yet" in t]
    oversized = [t for t in notices if t.startswith("the request went out larger")]
    assert len(oversized) == 1 and oversized[0].endswith(RAISE_ONLY)  # /compact cannot help
    assert len(model_server.requests) == 9  # every request a turn's call: no summary asked


def test_the_next_turn_says_it_again_once(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = make_agent(context_window=400)
    for turn in range(2):
        model_server.enqueue(
            *(Reply(tool_calls=[ToolCall("echo", {"text": big(f"{turn}{n}")})]) for n in range(3)),
            Reply(text="done"),
        )
        agent.run_turn(f"turn {turn}")
    full = [n.text for n in events.of(Notice) if n.text.endswith(TURN_FILLS_CONTEXT)]
    assert 1 <= len(full) <= 2, full  # at most once a turn
