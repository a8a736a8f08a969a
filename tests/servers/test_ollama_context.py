"""Ollama's context, as the first turn learns it: `/api/ps` names the context a model runs
with (OLLAMA_CONTEXT_LENGTH, or 4k/32k/256k by the machine's VRAM) only once a request loaded
the model, so before the first request the window is an unconfirmed default: it is never
warned about, nor used to shrink the prompt; after it, `/api/ps` is read again and a small
context the model could exceed is said, once."""

from __future__ import annotations

from pathlib import Path

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import Event, Notice
from mm_tui.agent.session import SessionStore
from tests.servers.scenario import ANSWER, QUESTION, make_project, script
from tests.servers.zoo.ollama import Ollama


def first_turn(ollama: Ollama, tmp_path: Path) -> tuple[Agent, list[Notice]]:
    project = make_project(tmp_path)
    events: list[Event] = []
    config = Config(base_url=ollama.base_url, model=ollama.model, lsp_servers=(), yolo=True)
    agent = Agent(config, events.append, project, store=SessionStore(tmp_path / "s"),
                  retry_delays=())  # fmt: skip
    script(ollama)
    agent.run_turn(QUESTION)
    assert ollama.requests and agent.conversation.messages[-1]["content"] == ANSWER
    return agent, [e for e in events if isinstance(e, Notice)]


def test_the_first_turn_takes_the_context_ollama_loaded_the_model_with(tmp_path: Path) -> None:
    with Ollama() as ollama:
        agent, notices = first_turn(ollama, tmp_path)
        try:
            assert [n.text for n in notices if n.level == "warning"] == []
            assert not any("fixed prompt took" in n.text for n in notices)  # no shrink from 4k
            assert agent.budget.window == 16384
        finally:
            agent.close()


def test_a_small_context_ollama_confirms_is_said_once_with_its_fix(tmp_path: Path) -> None:
    with Ollama() as ollama:
        ollama.context = 4096  # what a small GPU's default gives
        agent, notices = first_turn(ollama, tmp_path)
        try:
            warnings = [n.text for n in notices if n.level == "warning"]
            assert warnings == [
                "Ollama runs qwen2.5-coder:14b with 4096 tokens of context (the model supports "
                "32768) — raise it with OLLAMA_CONTEXT_LENGTH or num_ctx, then set contextWindow"
            ]
            assert agent.budget.window == 4096
        finally:
            agent.close()
