"""Loops and runaways (SPEC §5), with their exact strings."""

from __future__ import annotations

import random

from mm_tui.agent.events import Notice, ToolFinished, ToolStatus
from mm_tui.agent.loop_detector import LoopDetector, LoopVerdict, repeated_pattern, runaway_error
from mm_tui.agent.session import read_session_document
from mm_tui.agent.stream import AssembledCall
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

LOOP_NOTE = (
    "[LOOP_DETECTED: You have attempted the same action multiple times with the same result. "
    "Please try a different approach or provide more information.]"
)
LOOP_STOP = (
    "[error: the model repeated the same nosuch call 6 times in a row with the same failing "
    "result — turn stopped by the loop detector; rephrase the request, or fix what the tool "
    "kept reporting]"
)
#: A repeated success is not called failing.
LOOP_STOP_AFTER_SUCCESS = (
    "[error: the model repeated the same echo call 6 times in a row with the same "
    "result — turn stopped by the loop detector; rephrase the request, or say what is still "
    "missing]"
)


def same_call() -> Reply:
    return Reply(tool_calls=[ToolCall("echo", {"text": "again"})])


def test_the_third_identical_call_gets_the_note_and_the_sixth_stops_the_turn(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    for _ in range(8):
        model_server.enqueue(same_call())
    agent, events = make_agent()

    ended = agent.run_turn("loop")

    outputs = [e.output for e in events.of(ToolFinished)]
    assert outputs[:2] == ["again", "again"]
    assert outputs[2] == f"again\n{LOOP_NOTE}"
    assert outputs[5] == LOOP_STOP_AFTER_SUCCESS
    assert len(outputs) == 6 and len(model_server.requests) == 6
    assert events.of(ToolFinished)[5].status is ToolStatus.LOOP_DETECTED
    assert ended.reason == "loop" and ended.error == LOOP_STOP_AFTER_SUCCESS
    assert any(n.level == "loop" and n.text == LOOP_STOP_AFTER_SUCCESS for n in events.of(Notice))
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1]["where"] == "generation"
    assert saved["errors"][-1]["message"] == LOOP_STOP_AFTER_SUCCESS
    assert_valid_history(agent.messages)
    assert sum(1 for m in agent.messages if m["role"] == "tool") == 6  # the history keeps all


def test_a_repeated_failure_stops_with_the_spec_line_word_for_word(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    for _ in range(8):
        model_server.enqueue(Reply(tool_calls=[ToolCall("nosuch", {})]))
    agent, events = make_agent()

    ended = agent.run_turn("loop")

    assert events.of(ToolFinished)[5].output == LOOP_STOP
    assert ended.reason == "loop" and ended.error == LOOP_STOP
    assert_valid_history(agent.messages)


def test_a_different_call_resets_the_count() -> None:
    detector = LoopDetector()
    verdicts = [detector.record("bash", {"command": "ls"}, "a") for _ in range(2)]
    verdicts.append(detector.record("bash", {"command": "pwd"}, "a"))
    verdicts += [detector.record("bash", {"command": "ls"}, "a") for _ in range(2)]
    assert LoopVerdict.WARN not in verdicts


def test_the_input_is_compared_as_json_with_sorted_keys() -> None:
    detector = LoopDetector()
    detector.record("edit_file", {"path": "a", "edits": []}, "x")
    detector.record("edit_file", {"edits": [], "path": "a"}, "x")
    assert detector.record("edit_file", {"path": "a", "edits": []}, "x") is LoopVerdict.WARN


def test_a_different_output_is_not_a_loop() -> None:
    detector = LoopDetector()
    for n in range(6):
        assert detector.record("bash", {"command": "date"}, str(n)) is LoopVerdict.NONE


def test_new_session_resets_the_detector(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, _ = make_agent()
    for _ in range(2):
        agent.detector.record("echo", {"text": "again"}, "again")
    agent.new_session()
    assert agent.detector.count == 0
    assert [m["role"] for m in agent.messages] == ["system"]


def test_a_runaway_tool_call_is_cut_at_once(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    runaway = '{"text": "' + "abcdefg" * 2000  # never closes: a model that went off the rails
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", runaway)], chunk_size=16))
    agent, events = make_agent()

    ended = agent.run_turn("go")

    assert ended.reason == "error"
    assert ended.error is not None
    assert ended.error.startswith(
        "[error: the model's tool call ran away: its arguments repeat the same pattern ("
    )
    assert ended.error.endswith(
        ") — generation stopped; rephrase the request, or try another model]"
    )
    assert not events.of(ToolFinished)  # nothing ran
    saved = read_session_document(agent.session_path)
    assert saved["errors"][-1]["where"] == "generation"
    assert_valid_history(agent.messages)


def test_repeated_pattern_needs_the_whole_window() -> None:
    assert repeated_pattern("xyz" + "abcd" * 64) == "abcd"
    assert repeated_pattern("abcd" * 63) is None  # shorter than 256 characters
    rng = random.Random(1)
    prose = "".join(rng.choice("abcdefghij klmnop") for _ in range(300))
    assert repeated_pattern(prose) is None
    assert repeated_pattern("0123456789" * 30) == "0123456789"


def test_arguments_past_256_kb_run_away_even_without_a_pattern() -> None:
    sane = AssembledCall("c1", "write_file", "".join(f"{i:07d}" for i in range(30_000)))  # 210 KB
    assert runaway_error(sane) is None
    big = AssembledCall("c2", "write_file")
    for i in range(0, 40_000, 100):  # streamed in fragments, 280 KB in all
        big.add("".join(f"{j:07d}" for j in range(i, i + 100)))
    assert "passed 256 KB" in (runaway_error(big) or "")
