"""The compact rows (`-p` piped, or `--output-format rows`) print text literally too."""

from __future__ import annotations

from pathlib import Path

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import mm


def test_rows_remove_escape_sequences_from_the_answer(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "printf '\\033]0;T\\007x'"})]),
        Reply(text="Done \x1b]0;PWNED\x07\x1b[41mred\x9b2J.", chunk_size=3),
    )
    result = mm("-p", "go", "--yolo", "--base-url", model_server.base_url, "--model", "m",
                cwd=tmp_path)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "Done red."  # the 8-bit CSI removed whole
    assert "\x1b" not in result.stdout and "\x9b" not in result.stdout


def test_rows_remove_escape_sequences_from_the_notices(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "no\x1b]0;T\x07!"}}))
    result = mm("-p", "go", "--base-url", model_server.base_url, "--model", "m", cwd=tmp_path)
    assert result.returncode == 1
    [line] = [line for line in result.stderr.splitlines() if line.startswith("[error]")]
    assert "(HTTP 401: no!)" in line
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
