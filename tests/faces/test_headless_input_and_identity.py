"""`-p` as scripts and people use it: text piped in, `-p -`, a hint when nobody can answer a
question, a failure never hidden in the preview, and the JSON that names its session.

Every case runs the real command against the scripted server and reads what the server was
sent or what the command printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from mm_tui.support.piped_input import STDIN_LIMIT, WAITING_HINT
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import clean_env


def mm_fed(
    *args: str, cwd: Path, stdin: bytes | None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`mm-tui ARGS` with `stdin` piped in (None: /dev/null)."""
    done = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", *args],
        cwd=cwd,
        env=clean_env(cwd),
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        done.args, done.returncode, done.stdout.decode(), done.stderr.decode()
    )


def last_user_text(server: ScriptedServer) -> str:
    [request] = server.wait_for_requests(1)
    users = [m for m in request["messages"] if m["role"] == "user"]
    return users[-1]["content"]


def server_args(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.base_url, "--model", "m"]


def test_piped_text_comes_before_the_prompt(tmp_path: Path, model_server: ScriptedServer) -> None:
    model_server.enqueue(Reply(text="It failed on line 2."))
    log = b"step 1 ok\nstep 2 FAILED: no such file\n"
    result = mm_fed("-p", "why did this fail", *server_args(model_server), cwd=tmp_path, stdin=log)
    assert result.returncode == 0, result.stderr
    assert last_user_text(model_server) == (
        "step 1 ok\nstep 2 FAILED: no such file\n\nwhy did this fail"
    )
    assert "It failed on line 2." in result.stdout


def test_dash_reads_the_whole_prompt_from_stdin(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    result = mm_fed(
        "-p", "-", *server_args(model_server), cwd=tmp_path, stdin=b"list the files\nplease\n"
    )
    assert result.returncode == 0, result.stderr
    assert last_user_text(model_server) == "list the files\nplease"


def test_no_piped_input_leaves_the_prompt_alone(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    result = mm_fed("-p", "hello", *server_args(model_server), cwd=tmp_path, stdin=None)
    assert result.returncode == 0, result.stderr
    assert last_user_text(model_server) == "hello"


@pytest.mark.parametrize(
    ("prompt", "stdin", "says"),
    [
        ("-", b"", "-p - found no prompt on standard input"),
        ("-", b"  \n\n", "-p - found no prompt on standard input"),
        ("go", b"\x7fELF\x00\x00binary", "standard input holds binary data"),
        ("go", b"x" * (STDIN_LIMIT + 1), "standard input is larger than 4 MiB"),
    ],
    ids=["empty", "blank", "binary", "too-large"],
)
def test_unusable_input_is_one_line_and_no_request(
    tmp_path: Path, model_server: ScriptedServer, prompt: str, stdin: bytes, says: str
) -> None:
    result = mm_fed("-p", prompt, *server_args(model_server), cwd=tmp_path, stdin=stdin)
    assert result.returncode == 2
    assert result.stderr.startswith(f"mm-tui: {says}") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr and model_server.requests == []


def test_input_that_is_not_utf8_is_sent_and_said(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    result = mm_fed("-p", "go", *server_args(model_server), cwd=tmp_path, stdin=b"caf\xe9 ok\n")
    assert result.returncode == 0, result.stderr
    assert last_user_text(model_server) == "caf\ufffd ok\n\ngo"
    assert "standard input is not all UTF-8: 1 place(s)" in result.stderr


def test_input_that_never_ends_is_said_then_read_when_it_ends(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok"))
    process = subprocess.Popen(
        [sys.executable, "-m", "mm_tui.cli", "-p", "go", *server_args(model_server)],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdin is not None and process.stderr is not None
    try:
        first_line = process.stderr.readline().decode()  # blocks until mm-tui says something
        assert WAITING_HINT in first_line
        assert model_server.requests == []  # nothing sent while the input is open
        _, err = process.communicate(b"late text\n", timeout=60)  # written, then closed
        assert process.returncode == 0, err
        assert last_user_text(model_server) == "late text\n\ngo"
    finally:
        process.kill()
        process.wait()


def test_a_question_nobody_can_answer_says_how_to_allow_it_once(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "git status"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "git log"})]),
        Reply(text="I could not run it."),
    )
    result = mm_fed(
        "-p", "go", "--output-format", "rows", *server_args(model_server), cwd=tmp_path, stdin=None
    )
    assert result.returncode == 0, result.stderr
    hints = [line for line in result.stderr.splitlines() if "nobody can answer in -p" in line]
    assert len(hints) == 1, result.stderr  # once per tool, not per call
    assert "--yolo" in hints[0] and "permissions.allow" in hints[0]
    assert "bash(git status" in hints[0]  # the rule that would have let this call run
    assert result.stdout.count("⊘ rejected") == 2


def test_a_failed_commands_exit_code_is_never_hidden_in_the_preview(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    (tmp_path / ".mm.yaml").write_text("previewLines: 3\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "seq 1 20; exit 3"})]),
        Reply(text="done"),
    )
    result = mm_fed(
        "-p", "go", "--output-format", "seed", "--yolo", *server_args(model_server),
        cwd=tmp_path, stdin=None,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("🛠️  bash: seq 1 20; exit 3")
    assert lines[start + 1 : start + 6] == [
        "  1",
        "  2",
        "  … 18 more lines",
        "  [exit code: exit status 3]",
        "done",
    ]


def json_lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_stream_json_opens_with_the_session_and_every_line_has_its_time(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "rm -rf build"})]),
        Reply(text="refused, fine"),
    )
    result = mm_fed(
        "-p", "go", "--output-format", "stream-json", *server_args(model_server),
        cwd=tmp_path, stdin=None,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = json_lines(result.stdout)
    opening = events[0]
    assert opening["type"] == "session_started" and opening["model"] == "m"
    assert {"bash", "read_file", "write_file", "edit_file"} <= set(opening["tools"])
    assert opening["cwd"] == str(tmp_path.resolve())
    times = [datetime.fromisoformat(event["time"]) for event in events]
    assert times == sorted(times) and all(t.utcoffset() is not None for t in times)
    question = next(e for e in events if e["type"] == "permission_request")
    assert question["rejected_by"] == "nobody_to_ask"
    result_line = events[-1]
    assert result_line["session_id"] == opening["session_id"]
    [call] = result_line["calls"]
    assert call["status"] == "rejected" and call["rejected_by"] == "nobody_to_ask"
    [denial] = result_line["permission_denials"]
    assert denial == {
        "call_id": call["id"],
        "tool": "bash",
        "detail": "rm -rf build",
        "rejected_by": "nobody_to_ask",
    }


def test_a_script_resumes_the_run_with_the_session_id_it_was_given(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="The word is PLUM."))
    first = mm_fed(
        "-p", "remember PLUM", "--output-format", "json", *server_args(model_server),
        cwd=tmp_path, stdin=None,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    [report] = json_lines(first.stdout)
    session_id = report["session_id"]
    assert report["model"] == "m" and session_id

    model_server.enqueue(Reply(text="PLUM"))
    second = mm_fed(
        "-p", "which word?", "--resume", session_id, "--output-format", "json",
        *server_args(model_server), cwd=tmp_path, stdin=None,
    )  # fmt: skip
    assert second.returncode == 0, second.stderr
    assert json_lines(second.stdout)[0]["session_id"] == session_id
    request = model_server.wait_for_requests(2)[1]
    texts = [m.get("content") for m in request["messages"]]
    assert "remember PLUM" in texts and "The word is PLUM." in texts
