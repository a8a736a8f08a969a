"""The `mm-tui` command as a person types it: help, version, config errors, headless mode."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.waiting import wait_until


def mm(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    full_env.update({"HOME": str(cwd), "XDG_DATA_HOME": str(cwd / "data")})
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", *args],
        cwd=cwd,
        env=full_env,
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_help_and_version(tmp_path: Path) -> None:
    shown = mm("--help", cwd=tmp_path)
    assert shown.returncode == 0
    for flag in (
        "--config",
        "--model",
        "--base-url",
        "--yolo",
        "--print",
        "--continue",
        "--resume",
    ):
        assert flag in shown.stdout
    version = mm("--version", cwd=tmp_path)
    assert version.returncode == 0 and version.stdout.startswith("mm-tui ")


@pytest.mark.parametrize(
    "content",
    ["maxOutput: many\n", "\x00\x01garbage: [\n", "- a\n"],
    ids=["type", "garbage", "list"],
)
def test_a_bad_config_exits_2_with_one_line_and_no_traceback(tmp_path: Path, content: str) -> None:
    (tmp_path / ".mm.yaml").write_text(content)
    result = mm("-p", "hi", cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mm-tui: config error in ")
    assert str(tmp_path / ".mm.yaml") in lines[0]
    assert "Traceback" not in result.stderr


def test_headless_prints_the_answer_the_rows_and_the_summary(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "echo hi"})]))
    model_server.enqueue(Reply(text="The command said **hi**."))
    result = mm("-p", "run echo", "--base-url", model_server.base_url, "--model", "m", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("‣ bash echo hi  ⊘ rejected ")  # no --yolo: nobody to ask
    assert "The command said **hi**." in result.stdout
    assert lines[-1].startswith(
        "⚙ 1 command(s) · 📝 0 file op(s) · 📖 0 skill(s) · 🔎 0 lsp call(s)"
    )
    tool_result = model_server.requests[1]["messages"][-1]
    assert tool_result["content"] == "[command rejected by the user]"


def test_headless_with_yolo_runs_the_command(tmp_path: Path, model_server: ScriptedServer) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "echo hi"})]))
    model_server.enqueue(Reply(text="done"))
    result = mm("-p", "go", "--yolo", "--base-url", model_server.base_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("‣ bash echo hi  ✓ ")
    assert model_server.requests[1]["messages"][-1]["content"].startswith("hi")


def test_headless_against_no_server_says_which_url_in_one_line(tmp_path: Path) -> None:
    result = mm("-p", "hi", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    [line] = [line for line in result.stderr.splitlines() if line.startswith("[error]")]
    assert "cannot reach the model server at http://127.0.0.1:9/v1" in line
    assert "--base-url" in line


def test_headless_exit_status_is_1_when_the_turn_ends_in_an_error(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "no"}}))
    result = mm("-p", "hi", "--base-url", model_server.base_url, "--model", "m", cwd=tmp_path)
    assert result.returncode == 1
    assert "refused the API key (HTTP 401: no)" in result.stderr


def test_ctrl_c_headless_interrupts_the_turn_and_ends_the_command(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    import signal

    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo $$ > pid.txt; sleep 30"})])
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env.update({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")})
    process = subprocess.Popen(
        [sys.executable, "-m", "mm_tui.cli", "-p", "wait", "--yolo", "--base-url",
         model_server.base_url, "--model", "m"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    pid_file = tmp_path / "pid.txt"
    written = lambda: pid_file.exists() and pid_file.read_text().strip()  # noqa: E731
    wait_until(written, "the command's pid", timeout=30, interval=0.05)
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=20)

    assert process.returncode == 0, err
    assert "‣ bash echo $$ > pid.txt; sleep 30  ■ interrupted" in out
    assert "interrupted by the user" in err and "Traceback" not in err
    sleep_pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(sleep_pid, 0)
    [session] = (tmp_path / "data/mm/sessions").glob("*.jsonl")
    roles = [m["role"] for m in read_session_document(session)["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]


def test_ctrl_c_while_the_command_line_is_read_ends_with_130_and_no_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ctrl+C typed as mm-tui starts (the terminal still interrupts then) lands wherever
    Python is: building the flags imports every subcommand (tried in tmux: a traceback)."""
    from mm_tui import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main([]) == 130


def test_resume_of_an_unknown_id_stops_with_one_line_and_no_window(tmp_path: Path) -> None:
    for face in ((), ("-p", "hi")):
        done = mm("--resume", "20990101-nope", *face, cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr.startswith("mm-tui: cannot resume: no session file ")
        assert "20990101-nope" in done.stderr
        assert "Traceback" not in done.stderr
