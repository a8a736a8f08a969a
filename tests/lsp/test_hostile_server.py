"""A hostile language server (fixtures/hostile_server.py) against the client (a
security audit): odd URIs, a NUL in a URI, words that are not one line, a huge hover, an edit the
server applies itself, a server that will not stop. Each answer is one clear line or the
right text; nothing is written; nothing outlives `close`."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.lsp import LspTool
from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of
from tests.processes import process_group_members

LIBRARY = "def greet(name):\n    return name\n"
MAIN = "from lib import greet\n\nprint(greet('x'))\n"


def hostile(mode: str) -> LspServerSpec:
    command = (sys.executable, str(FIXTURES / "hostile_server.py"), mode)
    return LspServerSpec(name="hostile", command=command, extensions=(".py",))


Start = Callable[..., LspWorkspace]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    (tmp_path / "lib.py").write_text(LIBRARY)
    (tmp_path / "main.py").write_text(MAIN)
    started: list[LspWorkspace] = []

    def begin(mode: str, timeouts: Timeouts | None = None) -> LspWorkspace:
        workspace = LspWorkspace([hostile(mode)], tmp_path, timeouts or Timeouts(indexing=0.0))
        started.append(workspace)
        return workspace

    yield begin
    for workspace in started:
        workspace.close()


def test_locations_that_name_no_file_are_left_out_and_a_percent_encoded_one_is_read(
    start: Start,
) -> None:
    # Resolved naively, "untitled:Untitled-1" and "file:lib.py" became paths in mm-tui's
    # own folder (read and shown), and the NUL ended the call with an internal error.
    workspace = start("uris")
    answer = workspace.execute(LspQuery("definition", "main.py", "greet"))
    assert answer == Text("lib.py:1:5  def greet(name):")
    # The diagnostics published for a NUL and an `untitled:` URI at start were dropped.
    assert text_of(workspace.execute(LspQuery("definition", "main.py", "greet"))) == (
        "lib.py:1:5  def greet(name):"
    )


def test_an_error_of_many_lines_and_escapes_is_one_short_line(start: Start) -> None:
    answer = start("uris").execute(LspQuery("hover", "main.py", "greet"))
    assert isinstance(answer, Failed)
    assert answer.text.startswith("[lsp: hostile: hover failed: first line second line red xxx"), (
        answer.text
    )
    assert "\n" not in answer.text and "\x1b" not in answer.text
    assert len(answer.text) < 400


def test_a_rename_into_a_uri_with_a_nul_is_refused_and_writes_nothing(
    start: Start, tmp_path: Path
) -> None:
    answer = start("rename-nul").execute(LspQuery("rename", "lib.py", "greet", new_name="salute"))
    # The refusal came from inside the rename's check, before any file was read: it ended
    # the call as "[lsp: internal error: EditRefused: …]" before the fix.
    uri = f"file://{quote(str(tmp_path))}/%00evil.py"
    assert answer == Failed(
        f"[lsp: rename refused: the server wanted to edit {uri}, which is not a file on disk "
        "— nothing was written]"
    )
    assert (tmp_path / "lib.py").read_text() == LIBRARY
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib.py", "main.py"]


def test_an_edit_the_server_applies_itself_is_declined_and_not_written(
    start: Start, tmp_path: Path
) -> None:
    answer = start("apply-edit").execute(LspQuery("hover", "main.py", "greet"))
    assert answer == Text(
        '{"applied": false, "failureReason": "mm-tui applies edits only through rename"}'
    )
    assert (tmp_path / "main.py").read_text() == MAIN


def test_a_hover_of_a_million_characters_arrives_whole_and_the_tool_cuts_it(
    start: Start, tmp_path: Path
) -> None:
    answer = start("huge-hover").execute(LspQuery("hover", "main.py", "greet"))
    assert answer == Text("h" * 1_000_000)
    tool, _ = LspTool.create((hostile("huge-hover"),), tmp_path, user_configured=True)
    assert tool is not None
    try:
        result = tool.run(
            {"action": "hover", "path": "main.py", "symbol": "greet"},
            ToolContext(tmp_path, max_output=2_000),
        )
    finally:
        tool.close()
    assert result.status is ToolStatus.DONE
    assert result.output.startswith("h" * 100)
    assert len(result.output) < 3_000


def test_a_server_that_never_answers_shutdown_and_ignores_sigterm_is_killed(
    start: Start,
) -> None:
    workspace = start("stubborn", Timeouts(indexing=0.0, stop_step=0.5))
    assert workspace.execute(LspQuery("definition", "main.py", "greet")) == Text(
        "lib.py:1:5  def greet(name):"
    )
    [group] = workspace.server_pids().values()
    assert workspace.close() == {"hostile": -9}  # SIGKILL: nothing else ended it
    assert process_group_members(group) == []


def test_a_rename_whose_edits_change_after_they_were_shown_writes_nothing(
    tmp_path: Path,
) -> None:
    # What you approve is what runs: the person allows the diff of the preview;
    # the run asks the server again, and this one slips a line into main.py then.
    (tmp_path / "lib.py").write_text(LIBRARY)
    (tmp_path / "main.py").write_text(MAIN)
    tool, _ = LspTool.create((hostile("two-faced"),), tmp_path, user_configured=True)
    assert tool is not None
    args = {"action": "rename", "path": "lib.py", "symbol": "greet", "new_name": "salute"}
    ctx = ToolContext(tmp_path)  # one call's context: the gate's preview, then the run
    try:
        preview = tool.preview(args, ctx)
        result = tool.run(args, ctx)
    finally:
        tool.close()
    assert preview.diff is not None and "main.py" not in preview.diff
    assert (result.output, result.status) == (
        "[lsp: rename refused: the server's edits are not the ones shown when the rename was "
        "allowed; call rename again to see them — nothing was written]",
        ToolStatus.FAILED,
    )
    assert (tmp_path / "lib.py").read_text() == LIBRARY
    assert (tmp_path / "main.py").read_text() == MAIN
