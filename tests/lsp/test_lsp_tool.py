"""The `lsp` tool as the turn loop sees it: declared, titled, asked, run, closed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext, ToolKind
from mm_tui.agent.tools.lsp import LspTool
from mm_tui.lsp.defaults import PYLSP, default_servers
from mm_tui.lsp.spec import LspServerSpec
from tests.lsp.conftest import copy_project
from tests.processes import process_group_members

GHOST = LspServerSpec(name="ghost", command=("mm-tui-no-such-server",), extensions=(".go",))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return copy_project(tmp_path)


@pytest.fixture
def tool(project: Path) -> Iterator[LspTool]:
    created, _ = LspTool.create([PYLSP], project, user_configured=True)
    assert created is not None
    yield created
    created.close()


def test_configured_servers_missing_from_the_path_are_skipped_with_a_warning(
    tmp_path: Path,
) -> None:
    tool, warnings = LspTool.create([PYLSP, GHOST], tmp_path, user_configured=True)
    assert tool is not None and tool.specs == (PYLSP,)
    assert warnings == [
        "[warning: lsp server ghost (mm-tui-no-such-server) not found on the PATH — skipped]"
    ]


def test_built_in_defaults_missing_from_the_path_are_skipped_silently(tmp_path: Path) -> None:
    tool, warnings = LspTool.create(default_servers(), tmp_path, user_configured=False)
    assert warnings == []
    assert tool is not None
    assert all(shutil.which(spec.command[0]) for spec in tool.specs)
    assert "basedpyright" in [spec.name for spec in tool.specs]


def test_no_server_found_means_no_tool(tmp_path: Path) -> None:
    tool, warnings = LspTool.create([GHOST], tmp_path, user_configured=True)
    assert tool is None
    assert len(warnings) == 1


def test_the_description_names_servers_actions_and_the_method(tool: LspTool) -> None:
    text = tool.description
    assert "Servers available: pylsp (.py .pyi)." in text
    for action in ("definition", "references", "hover", "symbols", "diagnostics", "rename"):
        assert action in text
    assert "references before changing a shared symbol, diagnostics after editing" in text
    assert tool.schema()["function"]["parameters"]["required"] == ["action", "path"]


def test_titles_read_as_the_terminal_display_of_the_seed(tool: LspTool) -> None:
    assert tool.title({"action": "definition", "path": "main.go", "symbol": "greet"}) == (
        "lsp definition main.go greet"
    )
    assert tool.title({"action": "definition", "path": "main.go", "line": 9, "column": 14}) == (
        "lsp definition main.go:9:14"
    )
    assert tool.title(
        {"action": "rename", "path": "main.go", "symbol": "greet", "new_name": "hello"}
    ) == ("lsp rename main.go greet → hello")
    assert tool.title({"action": "rename", "path": "main.go", "symbol": "Greet 1 12 Hello"}) == (
        "lsp rename main.go Greet → Hello"
    )
    assert tool.title({"action": "symbols", "path": "main.go"}) == "lsp symbols main.go"
    # The row names what the call asks about, as the file's language writes names.
    css = {"action": "rename", "path": "a.css", "symbol": "--brand-color", "new_name": "--main"}
    assert tool.title(css) == "lsp rename a.css --brand-color → --main"


def test_only_rename_asks_permission(tool: LspTool) -> None:
    assert tool.kind is ToolKind.LSP
    assert tool.rejection_text == "[rename rejected by the user]"
    assert tool.needs_permission({"action": "rename", "path": "a.py", "symbol": "x"})
    for action in ("definition", "references", "hover", "symbols", "diagnostics"):
        assert not tool.needs_permission({"action": action, "path": "a.py"})


def test_a_call_answers_with_the_place_and_its_source_line(tool: LspTool, project: Path) -> None:
    result = tool.run(
        {"action": "definition", "path": "app.py", "symbol": "greet"}, ToolContext(cwd=project)
    )
    assert result.output == "greetings.py:5:5  def greet(name: str) -> str:"
    assert result.status is ToolStatus.DONE


def test_a_failure_is_one_line_of_text_with_a_failed_status(tool: LspTool, project: Path) -> None:
    result = tool.run({"action": "hover", "path": "app.py", "symbol": "foo"}, ToolContext(project))
    assert (result.output, result.status) == (
        '[lsp: "foo" not found in app.py]',
        ToolStatus.FAILED,
    )
    missing = tool.run({"path": "app.py"}, ToolContext(project))
    assert missing.output == '[error: lsp needs "action" (a string)]'
    unknown = tool.run({"action": "callers", "path": "app.py"}, ToolContext(project))
    assert unknown.output == (
        '[lsp: unknown action "callers" — use definition, references, hover, symbols, '
        "diagnostics or rename]"
    )


def test_a_rename_previews_its_diff_then_writes_it(tool: LspTool, project: Path) -> None:
    args = {"action": "rename", "path": "app.py", "symbol": "greet", "new_name": "salute"}
    preview = tool.preview(args, ToolContext(project))
    assert preview.title == "lsp rename app.py greet → salute"
    assert preview.diff is not None and "+def salute(name: str) -> str:" in preview.diff
    assert "def greet(" in (project / "greetings.py").read_text()
    result = tool.run(args, ToolContext(project))
    assert result.output.startswith("renamed to salute: 2 edit(s) in 2 file(s)\n")
    assert result.diff == preview.diff
    assert "def salute(" in (project / "greetings.py").read_text()


def test_a_rename_allowed_from_its_preview_writes_the_diff_shown(
    tool: LspTool, project: Path
) -> None:
    # As the turn loop runs it: one context for the gate's preview and the run, which
    # writes only what the preview showed (the server is asked again and agrees).
    args = {"action": "rename", "path": "app.py", "symbol": "greet", "new_name": "salute"}
    ctx = ToolContext(project)
    preview = tool.preview(args, ctx)
    assert preview.basis == preview.diff and preview.diff
    result = tool.run(args, ctx)
    assert result.output.startswith("renamed to salute: 2 edit(s) in 2 file(s)\n")
    assert result.diff == preview.diff
    assert "def salute(" in (project / "greetings.py").read_text()


def test_output_is_cut_to_max_output(tool: LspTool, project: Path) -> None:
    result = tool.run({"action": "symbols", "path": "greetings.py"}, ToolContext(project, 20))
    assert result.output.startswith("function greet  line")
    assert result.output.endswith("more characters not shown]")


def test_closing_the_tool_stops_its_servers(project: Path) -> None:
    tool, _ = LspTool.create([PYLSP], project, user_configured=True)
    assert tool is not None
    tool.run({"action": "symbols", "path": "app.py"}, ToolContext(project))
    group = tool.running_servers()["pylsp"]
    tool.close()
    assert process_group_members(group) == []
    assert tool.running_servers() == {}


def test_declaring_the_tool_does_not_load_the_client_libraries() -> None:
    code = (
        "import sys, pathlib\n"
        "from mm_tui.agent.tools.lsp import LspTool\n"
        "from mm_tui.lsp.defaults import default_servers\n"
        "tool, _ = LspTool.create(default_servers(), pathlib.Path('.'), user_configured=False)\n"
        "tool.description, tool.title({'action': 'hover', 'path': 'a.py', 'symbol': 'x'})\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pygls', 'lsprotocol', 'cattrs', 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_file_edited_by_edit_file_between_two_calls_is_sent_again(
    tool: LspTool, project: Path
) -> None:
    # Every open document is kept true: edit_file moves greet three lines down in
    # greetings.py, a file the server has open since the first answer pointed into it.
    from mm_tui.agent.tools.edit_file import EditFileTool

    ctx = ToolContext(cwd=project)
    ask = {"action": "definition", "path": "app.py", "symbol": "greet"}
    assert tool.run(ask, ctx).output == "greetings.py:5:5  def greet(name: str) -> str:"
    edits = [{"old": "# greet builds", "new": "# one\n# two\n# three\n# greet builds"}]
    edited = EditFileTool().run({"path": "greetings.py", "edits": edits}, ctx)
    assert edited.status is ToolStatus.DONE
    assert tool.run(ask, ctx).output == "greetings.py:8:5  def greet(name: str) -> str:"
