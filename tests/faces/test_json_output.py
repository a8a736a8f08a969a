"""`-p --output-format json|stream-json`: what a program reads, parsed from the real command,
and the exit status of each way a turn ends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mm_tui.support.terminal_text import literal
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import mm

ANSWER_WITH_ESCAPES = "Done \x1b]0;PWNED\x07\x1b[41mred\x9b2J é ✓"


def run_json(tmp_path: Path, server: ScriptedServer, *args: str, fmt: str = "json"):
    return mm(
        "-p", "go", "--output-format", fmt, "--base-url", server.base_url, "--model", "m",
        *args, cwd=tmp_path,
    )  # fmt: skip


def the_one_object(stdout: str) -> dict[str, Any]:
    [line] = stdout.splitlines()
    return json.loads(line)


def test_json_is_one_object_with_the_answer_calls_counters_usage_and_status(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(
            text="Let me run it.",
            tool_calls=[ToolCall("bash", {"command": "echo hi"})],
            usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
        ),
        Reply(
            text=ANSWER_WITH_ESCAPES,
            usage={"prompt_tokens": 120, "completion_tokens": 5, "total_tokens": 125},
        ),
    )
    result = run_json(tmp_path, model_server, "--yolo")
    assert result.returncode == 0, result.stderr
    assert literal(result.stdout) == result.stdout  # no raw control character reaches stdout
    report = the_one_object(result.stdout)
    assert report["type"] == "result" and report["exit_status"] == 0
    assert report["reason"] == "answered"
    assert report["answer"] == ANSWER_WITH_ESCAPES  # exact, escaped by JSON, not lost
    [call] = report["calls"]
    assert call["name"] == "bash" and call["arguments"] == {"command": "echo hi"}
    assert call["status"] == "done" and call["output"] == "hi\n" and call["title"] == "bash echo hi"
    assert report["counters"] == {"commands": 1, "file_ops": 0, "skills": 0, "lsp_calls": 0}
    assert report["usage"] == {"prompt_tokens": 220, "completion_tokens": 15}
    assert report["errors"] == []
    assert result.stderr == ""


def test_json_says_a_refused_call_and_an_edit_with_its_diff(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "rm -rf x"})]),
        Reply(text="ok"),
    )
    report = the_one_object(run_json(tmp_path, model_server).stdout)  # no --yolo: refused
    [call] = report["calls"]
    assert call["status"] == "rejected" and call["output"] == "[command rejected by the user]"

    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "n.txt", "content": "new\n"})]),
        Reply(text="written"),
    )
    report = the_one_object(run_json(tmp_path, model_server, "--yolo").stdout)
    [call] = report["calls"]
    assert call["diff"].startswith("--- /dev/null\n+++ b/n.txt\n")
    assert (tmp_path / "n.txt").read_text() == "new\n"


def test_stream_json_is_one_event_a_line_as_it_happens_then_the_result(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(reasoning="thinking hard", tool_calls=[ToolCall("bash", {"command": "echo hi"})]),
        # A pause mid-answer: its two parts are read apart (a read holds what came meanwhile).
        Reply(text=ANSWER_WITH_ESCAPES, chunk_size=4, pause=0.5, pause_after=8),
    )
    result = run_json(tmp_path, model_server, "--yolo", fmt="stream-json")
    assert result.returncode == 0, result.stderr
    assert literal(result.stdout) == result.stdout
    events = [json.loads(line) for line in result.stdout.splitlines()]
    types = [event["type"] for event in events]
    assert types[0] == "session_started" and types[1] == "turn_started"
    assert events[1]["text"] == "go"
    assert types[-1] == "result" and events[-1]["answer"] == ANSWER_WITH_ESCAPES
    assert types[-2] == "turn_ended" and types[-3] == "turn_summary"
    started = types.index("tool_started")
    assert types.index("reasoning_delta") < started < types.index("tool_finished")
    assert events[started]["arguments"] == {"command": "echo hi"}
    finished = events[types.index("tool_finished")]
    assert finished["status"] == "done" and finished["output"] == "hi\n"
    running = types.index("tool_running")  # the call runs (yolo: no question first)
    assert started < running < types.index("tool_finished")
    assert events[running] == {"type": "tool_running", "call_id": events[started]["call_id"],
                               "name": "bash", "time": events[running]["time"]}  # fmt: skip
    deltas = "".join(e["text"] for e in events if e["type"] == "text_delta")
    assert deltas == ANSWER_WITH_ESCAPES and types.count("text_delta") > 1


def test_a_turn_error_exits_1_and_names_the_error(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "no"}}))
    result = run_json(tmp_path, model_server)
    assert result.returncode == 1
    report = the_one_object(result.stdout)
    assert report["exit_status"] == 1 and report["reason"] == "error"
    assert any("refused the API key (HTTP 401: no)" in error for error in report["errors"])


def test_spending_max_turns_exits_3(tmp_path: Path, model_server: ScriptedServer) -> None:
    (tmp_path / ".mm.yaml").write_text("maxTurns: 2\n")
    for n in range(2):
        model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": f"echo {n}"})]))
    result = run_json(tmp_path, model_server, "--yolo")
    assert result.returncode == 3, result.stderr
    report = the_one_object(result.stdout)
    assert report["reason"] == "max_turns" and report["exit_status"] == 3
    assert len(report["calls"]) == 2


def test_the_loop_detector_exits_4(tmp_path: Path, model_server: ScriptedServer) -> None:
    for _ in range(6):
        model_server.enqueue(Reply(tool_calls=[ToolCall("read_file", {"path": "missing.txt"})]))
    result = run_json(tmp_path, model_server)
    assert result.returncode == 4, result.stderr
    report = the_one_object(result.stdout)
    assert report["reason"] == "loop" and report["exit_status"] == 4
    assert report["calls"][-1]["status"] == "loop detected"
    assert "turn stopped by the loop detector" in report["errors"][-1]


@pytest.mark.parametrize("fmt", ["json", "stream-json", "seed", "rows"])
def test_a_bad_config_exits_2_in_every_format(tmp_path: Path, fmt: str) -> None:
    (tmp_path / ".mm.yaml").write_text("maxOutput: many\n")
    result = mm("-p", "hi", "--output-format", fmt, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("mm-tui: config error in ")


def test_output_format_without_p_is_refused(tmp_path: Path) -> None:
    result = mm("--output-format", "json", cwd=tmp_path)
    assert result.returncode == 2
    assert "--output-format goes with -p/--print" in result.stderr
