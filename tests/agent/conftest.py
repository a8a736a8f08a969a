"""Helpers for the agent-core tests: small real tools, an agent wired to a scripted server,
the history-validity check every fault test ends with, and the exact-outcome check of the
recorded-reply corpora."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import Outcome, expected_calls
from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import Event, PermissionAnswer, PermissionRequest, ToolStatus
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.base import Tool, ToolContext, ToolKind, ToolResult
from mm_tui.agent.tools.registry import ToolRegistry
from scripted_server import ScriptedServer
from tests.waiting import wait_until


class EchoTool(Tool):
    """Returns its `text` argument: the smallest real tool."""

    name = "echo"
    kind = ToolKind.COMMAND
    fixed_description = "Echo the text back."
    parameters = {"type": "object", "properties": {"text": {"type": "string"}}}

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult(str(args.get("text", "")))


class GuardedTool(Tool):
    """Writes a marker file; asks permission first, like edit_file."""

    name = "touch"
    kind = ToolKind.FILE
    rejection_text = "[edit rejected by the user]"
    fixed_description = "Create an empty file."
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}}

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        (ctx.cwd / str(args["path"])).write_text("")
        return ToolResult(f"created {args['path']}")


class WaitTool(Tool):
    """Waits until interrupted (or 20 s): stands in for a long command."""

    name = "wait"
    kind = ToolKind.COMMAND
    fixed_description = "Wait."
    parameters = {"type": "object", "properties": {}}

    def __init__(self) -> None:
        self.started = threading.Event()

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.started.set()
        if ctx.cancel.wait(20):
            return ToolResult("waited, then interrupted", ToolStatus.INTERRUPTED)
        return ToolResult("waited 20s")


class Recorder:
    """A sink that keeps every event and answers permission questions as told."""

    def __init__(self, answer: PermissionAnswer | None = PermissionAnswer.ALLOW_ONCE) -> None:
        self.events: list[Event] = []
        self.answer = answer
        self.lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self.lock:
            self.events.append(event)
        if isinstance(event, PermissionRequest) and self.answer is not None:
            event.future.set_result(self.answer)

    def of(self, kind: type) -> list[Any]:
        with self.lock:
            return [e for e in self.events if isinstance(e, kind)]

    def wait_for(self, kind: type, timeout: float = 20.0) -> Any:
        """The first `kind` event, once the agent's thread has sent one."""
        found = wait_until(
            lambda: self.of(kind), f"a {kind.__name__} event", timeout=timeout, interval=0.01
        )
        return found[0]


def assert_valid_history(messages: list[dict[str, Any]]) -> None:
    """Every tool call is answered once, right after its assistant message, and no tool
    message stands alone: what an OpenAI-compatible server demands of the next request."""
    pending: list[str] = []
    for message in messages:
        role = message["role"]
        assert role in ("system", "user", "assistant", "tool"), message
        if role == "tool":
            assert message["tool_call_id"] in pending, f"orphan tool result {message}"
            pending.remove(message["tool_call_id"])
            assert isinstance(message["content"], str)
            continue
        assert not pending, f"tool calls {pending} left unanswered before {message}"
        if role == "assistant":
            pending = [call["id"] for call in message.get("tool_calls", [])]
            ids = set(pending)
            assert len(ids) == len(pending), "duplicate tool call ids"
    assert not pending, f"tool calls {pending} left unanswered at the end"


def assert_replays_exactly(case: dict[str, Any], outcome: Outcome) -> None:
    """A recorded reply (a case of tests/agent/fixtures/*_replies.yaml) replayed to its exact
    outcome: nothing crashed, exactly the expected calls ran (names, arguments, order), the
    visible text is the case's `text`, and its `sees` line is among what the person saw."""
    assert not outcome.crashed
    assert outcome.calls == expected_calls(case)
    if "text" in case:
        assert outcome.text == case["text"].strip()
    if "sees" in case:
        assert case["sees"].strip() in [line.strip() for line in [*outcome.lines, outcome.text]]


def said_in(case: dict[str, Any]) -> str:
    """A recorded reply's text and reasoning without white space: the same reply in two
    corpora compares equal however it was wrapped."""
    reply = case["reply"]
    return re.sub(r"\s+", "", (reply.get("text") or "") + (reply.get("reasoning") or ""))


AgentFactory = Callable[..., tuple[Agent, Recorder]]


@pytest.fixture
def make_agent(model_server: ScriptedServer, tmp_path: Path) -> Iterator[AgentFactory]:
    """Build an Agent talking to the scripted server, with test tools and a temp session dir."""
    agents: list[Agent] = []

    def make(
        tools: list[Tool] | None = None,
        answer: PermissionAnswer | None = PermissionAnswer.ALLOW_ONCE,
        **config: Any,
    ) -> tuple[Agent, Recorder]:
        recorder = Recorder(answer)
        timeout = config.pop("request_timeout", 10.0)
        opening = {k: config.pop(k) for k in ("resume", "continue_last") if k in config}
        settings: dict[str, Any] = {"base_url": model_server.base_url, "model": "scripted-model"}
        settings.update(config)
        agent = Agent(
            Config(**settings),
            recorder,
            tmp_path,
            store=SessionStore(tmp_path / "sessions"),
            registry=ToolRegistry.of(tools if tools is not None else [EchoTool()]),
            request_timeout=timeout,
            retry_delays=(0.01, 0.01, 0.01),
            **opening,
        )
        agents.append(agent)
        return agent, recorder

    yield make
    for agent in agents:
        agent.close()
