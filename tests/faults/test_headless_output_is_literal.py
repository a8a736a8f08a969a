"""Headless `-p` output keeps the terminal the person's: no escape sequence and no
control character but newline and tab reaches stdout or stderr, whatever the model, a
command or a server wrote."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from scripted_server import Reply, ScriptedServer, ToolCall

FORBIDDEN = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
HOSTILE_TEXT = (
    "Done.\x1b]0;pwned title\x07 \x1b[2J\x1b[31mred\x1b[0m \x9b31m \x1bP+q\x1b\\ bell\x07"
)


def test_headless_stdout_and_stderr_carry_no_escape_or_control_character(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "printf '\\033]0;x\\007'; echo \x1b[5m"})]),
        Reply(text=HOSTILE_TEXT),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env.update({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")})
    done = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "-p", "go", "--yolo"]
        + ["--base-url", model_server.base_url, "--model", "m\x1b[31m"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Done." in done.stdout and "red" in done.stdout
    assert not FORBIDDEN.search(done.stdout), repr(done.stdout)
    assert not FORBIDDEN.search(done.stderr), repr(done.stderr)
