"""Language servers that fail: one that crashes mid-request, one that never
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
LSP_FIXTURES = Path(__file__).parent.parent / "lsp" / "fixtures"
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


ACCENTED = 'banner = "café 🎉 " + greet("world")\nprint(greet("again"))\n'
RENAME = {"action": "rename", "path": "app.py", "symbol": "greet", "new_name": "salute"}


def renaming_tool(tmp_path: Path, mode: str) -> LspTool:
    command = (sys.executable, str(LSP_FIXTURES / "renaming_server.py"), mode)
    spec = LspServerSpec(name=f"renaming-{mode}", command=command, extensions=(".py",))
    tool, _ = LspTool.create((spec,), tmp_path, user_configured=True)
    assert tool is not None
    return tool


@pytest.mark.parametrize("mode", ["die-before", "die-midway"])
def test_a_server_dying_before_its_rename_answer_leaves_every_file_as_it_was(
    tmp_path: Path, mode: str
) -> None:
    (tmp_path / "app.py").write_text(ACCENTED)
    tool = renaming_tool(tmp_path, mode)
    try:
        result = tool.run(RENAME, ToolContext(cwd=tmp_path))
    finally:
        tool.close()
    assert result.status is ToolStatus.FAILED
    assert result.output.startswith(
        f"[lsp: renaming-{mode}: rename failed: the server exited with status 3"
    )
    assert (tmp_path / "app.py").read_text() == ACCENTED


def test_a_server_dying_right_after_its_rename_answer_leaves_the_rename_whole(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(ACCENTED)
    tool = renaming_tool(tmp_path, "die-after")
    try:
        result = tool.run(RENAME, ToolContext(cwd=tmp_path))
    finally:
        tool.close()
    assert (result.output, result.status) == (
        "renamed to salute: 2 edit(s) in 1 file(s)\napp.py: 2 edit(s)",
        ToolStatus.DONE,
    )
    assert (tmp_path / "app.py").read_text() == ACCENTED.replace("greet", "salute")


def test_a_rename_whose_ranges_miss_the_name_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text(ACCENTED)
    tool = renaming_tool(tmp_path, "off-by-one")
    try:
        result = tool.run(RENAME, ToolContext(cwd=tmp_path))
    finally:
        tool.close()
    assert (result.output, result.status) == (
        "[lsp: rename refused: the server's edit at app.py:1 replaces ' gree', not 'greet' "
        "— nothing was written]",
        ToolStatus.FAILED,
    )
    assert (tmp_path / "app.py").read_text() == ACCENTED
