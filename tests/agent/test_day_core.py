"""Small core points of a working day: what the turn summary and the durations count, and a request
larger than the context window said."""

from __future__ import annotations

import threading
import time

from mm_tui.agent.context import ContextBudget
from mm_tui.agent.events import (
    Notice,
    PermissionAnswer,
    PermissionRequest,
    ToolFinished,
    TurnSummary,
)
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, GuardedTool


def test_the_time_spent_waiting_for_the_answer_is_not_in_the_duration(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]), Reply(text="ok"))
    agent, events = make_agent(tools=[GuardedTool()], answer=None)

    def answer_late() -> None:
        request = events.wait_for(PermissionRequest)
        time.sleep(1.0)
        request.future.set_result(PermissionAnswer.ALLOW_ONCE)

    answerer = threading.Thread(target=answer_late)
    answerer.start()
    agent.run_turn("make a")
    answerer.join(5)

    [finished] = events.of(ToolFinished)
    assert finished.duration < 0.5  # the second waited for the person is not the tool's


def test_a_question_interrupted_before_its_answer_is_not_counted(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]))
    agent, events = make_agent(tools=[GuardedTool()], answer=None)

    def interrupt_the_question() -> None:
        events.wait_for(PermissionRequest)
        agent.cancel()

    interrupter = threading.Thread(target=interrupt_the_question)
    interrupter.start()
    agent.run_turn("make a")
    interrupter.join(5)

    [summary] = events.of(TurnSummary)
    assert summary.file_ops == 0


def test_a_request_larger_than_the_window_is_said() -> None:
    budget = ContextBudget(1000)
    request = {"messages": [{"role": "user", "content": "x" * 8000}]}

    warning = budget.after_call(request, (900, 10), "answer")

    assert warning.startswith("the request went out larger than the context window: about ")
    assert "tokens for a window of 1000" in warning


def test_the_agent_says_an_oversized_request_as_a_warning(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    agent, events = make_agent(context_window=300)

    agent.run_turn("y" * 4000)

    warnings = [n.text for n in events.of(Notice) if n.level == "warning"]
    assert any(
        w.startswith("the request went out larger than the context window") for w in warnings
    )
