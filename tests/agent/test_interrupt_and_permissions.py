"""Interrupt (SPEC §3) and the permission gate (SPEC §7)."""

from __future__ import annotations

import threading

from mm_tui.agent.events import (
    WAITING_FOR_ANSWER,
    PermissionAnswer,
    PermissionRequest,
    PermissionResolved,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolStatus,
    TurnEnded,
)
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, EchoTool, GuardedTool, WaitTool, assert_valid_history


def run_in_thread(agent, text: str) -> tuple[threading.Thread, list[TurnEnded]]:
    result: list[TurnEnded] = []
    thread = threading.Thread(target=lambda: result.append(agent.run_turn(text)))
    thread.start()
    return thread, result


def test_interrupt_mid_stream_keeps_the_partial_answer_and_a_valid_history(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="word " * 200, chunk_size=5, delay=0.02))
    model_server.enqueue(Reply(text="Next turn works."))
    agent, events = make_agent()

    thread, result = run_in_thread(agent, "talk a lot")
    events.wait_for(TextDelta)
    agent.cancel()
    thread.join(5)

    assert not thread.is_alive() and result[0].reason == "interrupted"
    partial = agent.messages[-1]
    assert partial["role"] == "assistant" and 0 < len(partial["content"]) < len("word " * 200)
    assert_valid_history(agent.messages)
    assert agent.run_turn("again").reason == "answered"
    assert agent.messages[-1]["content"] == "Next turn works."


def test_interrupt_while_waiting_for_the_first_token(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="late", stall=5.0))
    agent, events = make_agent()

    thread, result = run_in_thread(agent, "hello")
    model_server.wait_for_requests(1)
    agent.cancel()
    thread.join(3)

    assert not thread.is_alive() and result[0].reason == "interrupted"
    assert_valid_history(agent.messages)


def test_interrupt_mid_tool_answers_every_unanswered_call(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    waiter = WaitTool()
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("wait", {}), ToolCall("echo", {"text": "never runs"})])
    )
    model_server.enqueue(Reply(text="Back."))
    agent, events = make_agent(tools=[waiter, EchoTool()])

    thread, result = run_in_thread(agent, "wait")
    assert waiter.started.wait(5)
    agent.cancel()
    thread.join(5)

    assert result[0].reason == "interrupted"
    finished = events.of(ToolFinished)
    assert [f.status for f in finished] == [ToolStatus.INTERRUPTED, ToolStatus.INTERRUPTED]
    assert finished[1].output == "[interrupted by the user]"
    assert_valid_history(agent.messages)
    assert agent.run_turn("go on").reason == "answered"
    assert_valid_history(agent.messages)


def test_allow_once_runs_the_tool_and_asks_again_next_time(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]))
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "b"})]))
    model_server.enqueue(Reply(text="done"))
    agent, events = make_agent(tools=[GuardedTool()], answer=PermissionAnswer.ALLOW_ONCE)

    agent.run_turn("make files")

    assert len(events.of(PermissionRequest)) == 2
    assert (agent.cwd / "a").exists() and (agent.cwd / "b").exists()
    assert WAITING_FOR_ANSWER in [e.state for e in events.of(SpinnerChanged)]


def test_allow_for_the_session_is_not_asked_again(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]))
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "b"})]))
    model_server.enqueue(Reply(text="done"))
    agent, events = make_agent(tools=[GuardedTool()], answer=PermissionAnswer.ALLOW_SESSION)

    agent.run_turn("make files")

    assert len(events.of(PermissionRequest)) == 1
    resolved = events.of(PermissionResolved)
    assert [r.automatic for r in resolved] == [False, True]
    assert agent.grants == {"touch"}
    assert agent.revoke_grants(["touch"]) == ["touch"]  # /permissions revokes, through the seam
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "c"})]), Reply(text="ok"))
    agent.run_turn("one more")
    assert len(events.of(PermissionRequest)) == 2


def test_reject_returns_the_tools_rejection_text_and_writes_nothing(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]))
    model_server.enqueue(Reply(text="ok"))
    agent, events = make_agent(tools=[GuardedTool()], answer=PermissionAnswer.REJECT)

    agent.run_turn("make a file")

    finished = events.of(ToolFinished)[0]
    assert finished.status is ToolStatus.REJECTED
    assert finished.output == "[edit rejected by the user]"
    assert not (agent.cwd / "a").exists()
    request = events.of(PermissionRequest)[0]
    assert request.title == "touch a"


def test_yolo_and_allow_never_ask(make_agent: AgentFactory, model_server: ScriptedServer) -> None:
    for settings in ({"yolo": True}, {"permissions": "allow"}):
        model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "x"})]), Reply(text="ok"))
        agent, events = make_agent(tools=[GuardedTool()], answer=None, **settings)
        assert agent.run_turn("go").reason == "answered"
        assert not events.of(PermissionRequest)
        assert events.of(ToolFinished)[0].status is ToolStatus.DONE


def test_interrupt_while_the_question_waits(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("touch", {"path": "a"})]))
    agent, events = make_agent(tools=[GuardedTool()], answer=None)  # nobody answers

    thread, result = run_in_thread(agent, "go")
    request = events.wait_for(PermissionRequest)
    agent.cancel()
    thread.join(5)

    assert result[0].reason == "interrupted" and request.future.cancelled()
    assert events.of(ToolFinished)[0].output == "[interrupted by the user]"
    assert not (agent.cwd / "a").exists()
    assert_valid_history(agent.messages)
