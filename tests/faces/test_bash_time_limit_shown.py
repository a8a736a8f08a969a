"""A bash call that asks for more time than `bashTimeout` runs to completion, and the piped
faces say the limit it ran with after the command (the seed's header and the rows)."""

from __future__ import annotations

from pathlib import Path

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import mm


def slow_turn(server: ScriptedServer, tmp_path: Path, output_format: str) -> str:
    (tmp_path / ".mm.yaml").write_text("bashTimeout: 1\nbashTimeoutMax: 120\n")
    server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "sleep 2; echo built", "timeout": 90})]),
        Reply(text="Built."),
    )
    result = mm(
        "-p", "build", "--output-format", output_format, "--yolo",
        "--base-url", server.base_url, "--model", "m", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert server.requests[1]["messages"][-1]["content"] == "built\n"  # not cut at 1 s
    return result.stdout


def test_the_seed_display_shows_the_time_limit_after_the_command(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    lines = slow_turn(model_server, tmp_path, "seed").splitlines()
    assert lines[:2] == ["🛠️  bash: sleep 2; echo built · timeout 1m30s", "  built"]


def test_the_rows_show_the_time_limit_after_the_command(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    stdout = slow_turn(model_server, tmp_path, "text")
    assert "‣ bash sleep 2; echo built · timeout 1m30s  ✓" in stdout
