"""Language servers that fail (issue 7): one that crashes mid-request, one that never
answers, one that writes garbage to stdout. Each call answers a clear line within its time
limit; the next call works again; nothing raises."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.lsp import LspTool
from mm_tui.lsp.spec import LspServerSpec

FIXTURES = Path(__file__).parent / "fixtures"
SOURCE = "def greet(name):\n    return name\n\ngreet('x')\n"


def faulty_tool(tmp_path: Path, mode: str) -> tuple[LspTool, Path]:
    state = tmp_path / f"{mode}.starts"
    command = (sys.executable, str(FIXTURES / "faulty_lsp_server.py"), mode, str(state))
    spec = LspServerSpec(name=f"faulty-{mode}", command=command, extensions=(".py",))
    tool, warnings = LspTool.create((spec,), tmp_path, user_configured=True)
    assert tool is not None and warnings == []
    return tool, state


def definition(tool: LspTool, tmp_path: Path) -> tuple[str, ToolStatus, float]:
    started = time.monotonic()
    result = tool.run(
        {"action": "definition", "path": "app.py", "symbol": "greet", "line": 4},
        ToolContext(cwd=tmp_path),
    )
    return result.output, result.status, time.monotonic() - started


def test_a_server_that_crashes_mid_request_is_said_and_restarted(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    tool, state = faulty_tool(tmp_path, "crash")
    try:
        output, status, _ = definition(tool, tmp_path)
        assert output.startswith("[lsp: faulty-crash") and "\n" not in output.strip()
        second, _, _ = definition(tool, tmp_path)
        assert second.startswith("app.py:1:5")  # the restarted server answers
        assert state.read_text().count("start") == 2
    finally:
        tool.close()


def test_a_server_writing_garbage_to_stdout_does_not_break_the_tool(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    tool, state = faulty_tool(tmp_path, "garbage")
    try:
        first, _, _ = definition(tool, tmp_path)
        assert first == "app.py:1:5  def greet(name):"  # the junk before the answer is skipped
        second, _, _ = definition(tool, tmp_path)
        assert second.startswith("app.py:1:5")
    finally:
        tool.close()


@pytest.mark.parametrize("mode", ["crash", "garbage"])
def test_closing_a_faulty_server_leaves_nothing_running(tmp_path: Path, mode: str) -> None:
    (tmp_path / "app.py").write_text(SOURCE)
    tool, _ = faulty_tool(tmp_path, mode)
    definition(tool, tmp_path)
    definition(tool, tmp_path)  # the crashing one is running again after its restart
    [pid] = tool.running_servers().values()
    tool.close()
    assert tool.running_servers() == {}
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
