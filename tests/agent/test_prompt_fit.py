"""A prompt that fits the window actually served: the fixed part (system prompt, tools) is
counted with the server's own tokenizer where it has one, shown against the window, shrunk in
steps when it takes more than a quarter of a small window, and kept small by default."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import Event, Notice
from mm_tui.agent.prompt_fit import FIXED_SHARE, fixed_text, short_schemas
from mm_tui.agent.session import SessionStore
from mm_tui.widgets.top_line import prompt_text
from scripted_server import Reply, ScriptedServer

#: The lead over the mainstream agents (OpenCode ~7.7k, Codex ~10k, Gemini CLI ~9.7k tokens),
#: held as a guarantee: the default fixed prompt stays under this many tokens (estimated).
DEFAULT_PROMPT_LIMIT = 2000


def default_agent(server: ScriptedServer, tmp_path: Path, events: list[Event], **config) -> Agent:
    """An agent with the default tools and prompt (not the test tools)."""
    settings = {"base_url": server.base_url, "model": "scripted-model", **config}
    return Agent(
        Config(**settings),
        events.append,
        tmp_path,
        store=SessionStore(tmp_path / "sessions"),
        request_timeout=10.0,
        retry_delays=(0.01,),
    )


@pytest.mark.parametrize("tool_calls", ["native", "text"])
def test_the_default_fixed_prompt_stays_under_two_thousand_tokens(
    model_server: ScriptedServer, tmp_path: Path, tool_calls: str
) -> None:
    agent = default_agent(model_server, tmp_path, [], tool_calls=tool_calls)
    try:
        text = fixed_text(agent.model_call.request("scripted-model"))
        assert "You are mm" in text and "edit_file" in text
        assert len(text) // 4 <= DEFAULT_PROMPT_LIMIT
    finally:
        agent.close()


def tokenize_calls(server: ScriptedServer) -> list[object]:
    return [body for method, path, body in server.other_requests if path == "/tokenize"]


@pytest.mark.parametrize("dialect", ["llamacpp", "vllm"])
def test_the_fixed_prompt_is_counted_by_the_servers_tokenizer_and_shown(
    scripted_server_factory, tmp_path: Path, dialect: str
) -> None:
    server = scripted_server_factory(dialect)
    server.n_ctx = 32768
    events: list[Event] = []
    agent = default_agent(server, tmp_path, events, context_window=32768)
    try:
        assert agent.top_line().prompt == 0  # not counted before the first turn
        server.enqueue(Reply(text="Hello."))
        agent.run_turn("hi")
        text = fixed_text(server.requests[0])
        view = agent.top_line()
        assert view.prompt == math.ceil(len(text) / 3)  # the scripted tokenizer's count
        assert view.prompt != len(text) // 4  # not the estimate
        assert tokenize_calls(server)
        assert not [e for e in events if isinstance(e, Notice) and "fixed prompt" in e.text]
    finally:
        agent.close()


def test_a_server_without_a_tokenizer_gets_the_estimate(
    scripted_server_factory, tmp_path: Path
) -> None:
    server = scripted_server_factory("ollama")
    agent = default_agent(server, tmp_path, [], context_window=32768)
    try:
        server.enqueue(Reply(text="Hello."))
        agent.run_turn("hi")
        assert agent.top_line().prompt == len(fixed_text(server.requests[0])) // 4
        assert not tokenize_calls(server)
    finally:
        agent.close()


def test_a_small_window_shrinks_the_fixed_prompt_in_steps_and_says_so(
    scripted_server_factory, tmp_path: Path
) -> None:
    server = scripted_server_factory("llamacpp")
    server.n_ctx = 4096  # Ollama's default context, for instance
    events: list[Event] = []
    agent = default_agent(server, tmp_path, events)
    try:
        full = fixed_text(agent.model_call.request("scripted-model"))
        server.enqueue(Reply(text="Hello."))
        agent.run_turn("hi")
        said = [e.text for e in events if isinstance(e, Notice) and "fixed prompt" in e.text]
        assert len(said) == 1
        assert "of the 4.1k tokens served (over 25%): short tool descriptions" in said[0]
        sent = server.requests[0]
        assert fixed_text(sent) != full
        for tool in sent.get("tools") or []:
            description = tool["function"]["description"]
            assert "\n" not in description.strip()
        view = agent.top_line()
        assert view.prompt == math.ceil(len(fixed_text(sent)) / 3)
        assert view.prompt <= FIXED_SHARE * 4096
        names = [tool["function"]["name"] for tool in sent.get("tools") or []]
        assert {"bash", "read_file", "edit_file"} <= set(names)  # never given up
    finally:
        agent.close()


def test_short_descriptions_keep_one_sentence_of_each() -> None:
    schemas = [
        {
            "type": "function",
            "function": {
                "name": "t",
                "description": "Run it. Then more words.\nA second line.",
                "parameters": {
                    "type": "object",
                    "properties": {"a": {"type": "string", "description": "The a. Long."}},
                },
            },
        }
    ]
    short = short_schemas(schemas)[0]["function"]
    assert short["description"] == "Run it."
    assert short["parameters"]["properties"]["a"]["description"] == "The a."
    assert schemas[0]["function"]["description"].startswith("Run it. Then")  # not changed


def test_short_descriptions_keep_the_skills_catalogue(tmp_path: Path) -> None:
    from mm_tui.agent.tools.registry import build_registry

    skills = tmp_path / ".mm" / "skills"
    skills.mkdir(parents=True)
    (skills / "deploy.md").write_text("---\ndescription: Ship it to prod.\n---\nSteps.\n")
    registry = build_registry(Config(bash_tool=False, edit_tools=False), tmp_path)
    (schema,) = [s for s in registry.schemas() if s["function"]["name"] == "read_skill"]
    short = short_schemas([schema])[0]["function"]["description"]
    assert "  deploy — Ship it to prod." in short
    assert len(short) < len(schema["function"]["description"])


def test_the_top_line_writes_the_prompt_against_the_window() -> None:
    assert prompt_text(1500, 8192) == "prompt 1.5k/8.2k"
    assert prompt_text(851, 0) == "prompt 851"


@pytest.mark.parametrize(("n_ctx", "how"), [(3000, " (7"), (1024, " — more than the whole window")])
def test_a_fixed_prompt_near_or_over_the_window_is_said_once_with_what_to_change(
    scripted_server_factory, tmp_path: Path, n_ctx: int, how: str
) -> None:
    server = scripted_server_factory("llamacpp")
    server.n_ctx = n_ctx
    events: list[Event] = []
    agent = default_agent(server, tmp_path, events, system_prompt="Follow the house rules. " * 200)
    try:
        server.enqueue(Reply(text="Hello."), Reply(text="Again."))
        agent.run_turn("hi")
        agent.run_turn("hi again")
        said = [e.text for e in events if isinstance(e, Notice) and e.level == "warning"]
        crowded = [t for t in said if t.startswith("the fixed prompt (system prompt and tools)")]
        assert len(crowded) == 1, said
        assert f"tokens of context{how}" in crowded[0]
        assert crowded[0].endswith(
            "leaving little room for the conversation — raise the server's context "
            "(llama-server -c, Ollama OLLAMA_CONTEXT_LENGTH or num_ctx) and set contextWindow, "
            "or shorten systemPrompt and AGENTS.md"
        )
    finally:
        agent.close()


def test_a_fixed_prompt_well_inside_the_window_says_nothing_of_room(
    scripted_server_factory, tmp_path: Path
) -> None:
    server = scripted_server_factory("llamacpp")
    server.n_ctx = 4096  # shrunk to fit: said as info, no warning
    events: list[Event] = []
    agent = default_agent(server, tmp_path, events)
    try:
        server.enqueue(Reply(text="Hello."))
        agent.run_turn("hi")
        assert [e.text for e in events if isinstance(e, Notice) and e.level == "warning"] == []
    finally:
        agent.close()
