"""Loops beyond identical triples: a cycle of calls with the same results (A,B,A,B…)
and one tool called with new arguments that all fail each get a note first and a stop later,
in the spirit of the seed's 3/6 rule; the identical case keeps the seed's exact strings."""

from __future__ import annotations

from mm_tui.agent.events import Notice, ToolFinished, ToolStatus
from mm_tui.agent.loop_detector import (
    CYCLE_NOTE,
    LOOP_NOTE,
    LoopDetector,
    LoopVerdict,
)
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

CYCLE_STOP = (
    "[error: the model repeated the same cycle of 2 calls (echo, echo) 6 times with the same "
    "results — turn stopped by the loop detector; rephrase the request, or fix what the tools "
    "kept reporting]"
)


def test_a_two_call_cycle_gets_the_note_at_three_rounds_and_stops_at_six() -> None:
    detector = LoopDetector()
    verdicts = []
    for _ in range(6):
        verdicts.append(detector.record("read_file", {"path": "a"}, "A"))
        verdicts.append(detector.record("read_file", {"path": "b"}, "B"))
    assert verdicts[:5] == [LoopVerdict.NONE] * 5
    assert verdicts[5] is LoopVerdict.WARN and detector.note() == CYCLE_NOTE
    assert verdicts[6:11] == [LoopVerdict.WARN] * 5
    assert verdicts[11] is LoopVerdict.STOP
    assert "cycle of 2 calls (read_file, read_file) 6 times" in detector.stop_message("x")


def test_a_cycle_whose_results_change_is_progress_not_a_loop() -> None:
    detector = LoopDetector()
    verdicts = [
        detector.record(tool, {"n": 1}, f"{tool} {round_}")
        for round_ in range(8)
        for tool in ("build", "test")
    ]
    assert set(verdicts) == {LoopVerdict.NONE}


def test_one_tool_failing_with_new_arguments_gets_a_note_then_a_stop() -> None:
    detector = LoopDetector()
    verdicts = [
        detector.record("bash", {"command": f"try {n}"}, f"[error: no {n}]") for n in range(12)
    ]
    assert verdicts[:5] == [LoopVerdict.NONE] * 5
    assert verdicts[5] is LoopVerdict.WARN
    assert detector.note() != LOOP_NOTE and "bash" in detector.note()
    assert verdicts[11] is LoopVerdict.STOP
    assert detector.stop_message("bash").startswith("[error: the model called bash 12 times")


def test_failures_mixed_with_successes_are_work_not_a_loop() -> None:
    detector = LoopDetector()
    verdicts = [
        detector.record("bash", {"command": f"c{n}"}, "[error: x]" if n % 3 else "ok")
        for n in range(20)
    ]
    assert set(verdicts) == {LoopVerdict.NONE}


def test_the_identical_case_keeps_the_seed_strings() -> None:
    detector = LoopDetector()
    verdicts = [detector.record("echo", {"text": "x"}, "x") for _ in range(6)]
    assert verdicts[2] is LoopVerdict.WARN and detector.note() == LOOP_NOTE
    assert verdicts[5] is LoopVerdict.STOP
    assert detector.stop_message("echo").startswith("[error: the model repeated the same echo")


def test_a_cycle_through_the_agent_ends_the_turn_with_the_cycle_message(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    for _ in range(7):
        model_server.enqueue(
            Reply(tool_calls=[ToolCall("echo", {"text": "a"})]),
            Reply(tool_calls=[ToolCall("echo", {"text": "b"})]),
        )
    agent, events = make_agent()

    ended = agent.run_turn("loop")

    finished = events.of(ToolFinished)
    assert len(finished) == 12
    assert finished[5].output == f"b\n{CYCLE_NOTE}"
    assert finished[11].output == CYCLE_STOP
    assert finished[11].status is ToolStatus.LOOP_DETECTED
    assert ended.reason == "loop" and ended.error == CYCLE_STOP
    assert any(n.level == "loop" and n.text == CYCLE_STOP for n in events.of(Notice))
    assert_valid_history(agent.messages)


def test_an_answer_repeating_itself_gets_a_note_then_is_stopped(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    from mm_tui.agent.loop_detector import TEXT_NOTE

    text = "Let me think about it. " + "I will check the file again. " * 200
    model_server.enqueue(Reply(text=text, chunk_size=16))
    agent, events = make_agent()

    ended = agent.run_turn("go")

    notes = [n.text for n in events.of(Notice) if n.text == TEXT_NOTE]
    assert len(notes) == 1
    assert ended.reason == "error"
    assert ended.error.startswith("[error: the model's answer ran away: it repeats the same text")
    assert '"I will check the file again. ' in ended.error or "again" in ended.error
    assert_valid_history(agent.messages)


def test_a_long_answer_that_does_not_repeat_runs_to_its_end(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = " ".join(f"line {n} of the report says {n * n}." for n in range(300))
    model_server.enqueue(Reply(text=text, chunk_size=32))
    agent, events = make_agent()

    ended = agent.run_turn("go")

    assert ended.reason == "answered"
    assert not [n for n in events.of(Notice) if "repeating" in n.text]
