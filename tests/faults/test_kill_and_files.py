"""mm-tui killed mid-turn, and bad files at start: nothing said before the kill is
lost, no file is left half-written, and a bad config or session says so in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mm_tui.agent.session import read_session_document
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import assert_valid_history
from tests.waiting import wait_until


def environment(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / "data")})
    return env


def mm(*args: str, cwd: Path, **kwargs):
    return subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", *args],
        cwd=cwd,
        env=environment(cwd),
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=60,
        **kwargs,
    )


def continue_headless(model_server: ScriptedServer, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`mm-tui -p "go on" --continue` in `cwd`, which must succeed with the scripted server's
    next reply, "Resumed fine."."""
    resumed = mm(
        "-p", "go on", "--continue", "--base-url", model_server.base_url, "--model", "m", cwd=cwd
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "Resumed fine." in resumed.stdout
    return resumed


#: Not a repeated pattern: the runaway detector (SPEC §5) would rightly cut "kept\n" * 1000.
NOTES = "".join(f"line {n}: kept\n" for n in range(1000))


def session_files(home: Path) -> list[Path]:
    return sorted((home / "data/mm/sessions").glob("*.jsonl"))


def test_sigkill_mid_turn_loses_nothing_and_the_session_resumes(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    # The resumed history (1,000 lines of notes) fits a 32k window; in 8k it would be compacted
    # before the next message (test_a_resumed_history_too_big_for_the_window_is_compacted_first).
    model_server.n_ctx = 32768
    model_server.enqueue(
        Reply(
            text="Writing the file, then waiting.",
            tool_calls=[
                ToolCall("write_file", {"path": "notes.txt", "content": NOTES}),
            ],
        ),
        Reply(tool_calls=[ToolCall("bash", {"command": "sleep 30"})]),
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mm_tui.cli",
            "-p",
            "write then wait",
            "--yolo",
            "--base-url",
            model_server.base_url,
            "--model",
            "m",
        ],
        cwd=tmp_path,
        env=environment(tmp_path),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        model_server.wait_for_requests(2, timeout=30)

        def written() -> bool:  # the bash call is written before it runs
            files = session_files(tmp_path)
            return bool(files) and '"sleep 30"' in files[0].read_text().replace('\\"', '"')

        wait_until(written, "the bash call in the session file", timeout=10, interval=0.05)
        time.sleep(0.3)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(10)

    [path] = session_files(tmp_path)
    saved = read_session_document(path)  # every line parses: never half-written
    roles = [m["role"] for m in saved["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert (tmp_path / "notes.txt").read_text() == NOTES
    assert not list(tmp_path.glob(".notes.txt*")) and not list(path.parent.glob("*.tmp"))

    model_server.enqueue(Reply(text="Resumed fine."))
    resumed = continue_headless(model_server, tmp_path)
    assert "stopped in the middle of a tool call" in resumed.stderr
    sent = model_server.requests[-1]["messages"]
    assert_valid_history(sent)
    assert "write then wait" in json.dumps(sent)


@pytest.mark.parametrize(
    "content",
    ['{"version": 1, "messages": [', '{"version": 7, "messages": []}', "\x00\xff"],
    ids=["truncated", "future version", "binary"],
)
def test_a_corrupt_or_future_session_on_resume_is_kept_and_a_new_one_starts(
    tmp_path: Path, model_server: ScriptedServer, content: str
) -> None:
    sessions = tmp_path / "data/mm/sessions"
    sessions.mkdir(parents=True)
    bad = sessions / "old.json"
    bad.write_bytes(content.encode("utf-8", "surrogateescape"))
    before = bad.read_bytes()
    model_server.enqueue(Reply(text="New session here."))

    result = mm(
        "-p",
        "hi",
        "--resume",
        "old",
        "--base-url",
        model_server.base_url,
        "--model",
        "m",
        cwd=tmp_path,
    )

    assert result.returncode == 0 and "New session here." in result.stdout
    [line] = [x for x in result.stderr.splitlines() if "old.json" in x]
    assert "starting a new session" in line
    assert bad.read_bytes() == before
    assert len(list(sessions.glob("*.json"))) == 1 and len(list(sessions.glob("*.jsonl"))) == 1
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("kind", ["garbage", "empty", "directory", "not yaml mapping"])
def test_a_garbage_empty_or_directory_config(
    tmp_path: Path, model_server: ScriptedServer, kind: str
) -> None:
    config = tmp_path / ".mm.yaml"
    if kind == "directory":
        config.mkdir()
    elif kind == "garbage":
        config.write_bytes(os.urandom(64) + b"\n:::\n\t- [")
    elif kind == "empty":
        config.write_text("")
    else:
        config.write_text("just a sentence\n")
    model_server.enqueue(Reply(text="Defaults work."))

    result = mm("-p", "hi", "--base-url", model_server.base_url, "--model", "m", cwd=tmp_path)

    assert "Traceback" not in result.stderr
    if kind == "empty":
        assert result.returncode == 0 and "Defaults work." in result.stdout
    else:
        assert result.returncode == 2
        [line] = result.stderr.strip().splitlines()
        assert line.startswith(f"mm-tui: config error in {config}")


def test_a_resumed_history_too_big_for_the_window_is_compacted_first(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    """The context of a resumed session is known before any request (estimated): a history
    that no longer fits the server's window is summarised before the next message is sent,
    instead of being sent whole to a server that would cut it."""
    model_server.n_ctx = 8192
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": NOTES})]),
        Reply(text="Written."),
    )
    first = mm(
        "-p",
        "write the notes",
        "--yolo",
        "--base-url",
        model_server.base_url,
        "--model",
        "m",
        cwd=tmp_path,
    )
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "notes.txt").read_text() == NOTES

    model_server.enqueue(Reply(text="The notes were written."), Reply(text="Resumed fine."))
    resumed = continue_headless(model_server, tmp_path)
    assert "— compacting" in resumed.stderr
    sent = model_server.requests[-1]["messages"]
    assert_valid_history(sent)
    assert "line 999: kept" not in json.dumps(sent)
    assert "The notes were written." in json.dumps(sent)
