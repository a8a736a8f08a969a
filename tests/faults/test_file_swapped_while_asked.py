"""The file written is the file the question showed, and an edit is applied to what is on disk.

While a write or edit question waits, the name can be swapped for a symbolic link to a file
outside the project, a FIFO, a hard link to another file, or its folder for a link: the write
is then refused, nothing is written anywhere. Two mm-tui processes editing one file never lose
an edit reported applied. Each test fails without its defence (support/guarded_write.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import Tool, ToolContext
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.write_file import WriteFileTool

WRITE = {"path": "notes.txt", "content": "approved\n"}
EDIT = {"path": "notes.txt", "edits": [{"old": "keep", "new": "approved"}]}


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir(parents=True)
    outside.mkdir(parents=True)
    (project / "notes.txt").write_text("keep\n")
    (outside / "secret.txt").write_text("keep\n")
    return project, outside / "secret.txt"


def _asked_then_run(tool: Tool, args: dict[str, Any], project: Path, swap: Any) -> str:
    """Build the question (preview), swap something while it waits, then run the call."""
    ctx = ToolContext(cwd=project)
    preview = tool.preview(args, ctx)
    assert preview.diff, preview.detail
    swap()
    result = tool.run(args, ctx)
    assert result.status is ToolStatus.FAILED, result.output
    assert "\n" not in result.output
    assert "nothing was written" in result.output
    return result.output


def _to_link(project: Path, target: Path) -> None:
    (project / "notes.txt").unlink()
    (project / "notes.txt").symlink_to(target)


def test_a_write_to_a_name_swapped_for_a_link_outside_is_refused(tmp_path: Path) -> None:
    for tool, args in ((WriteFileTool(), WRITE), (EditFileTool(), EDIT)):
        project, secret = _project(tmp_path / tool.name)
        output = _asked_then_run(tool, args, project, lambda p=project, s=secret: _to_link(p, s))
        assert "symbolic link" in output
        assert secret.read_text() == "keep\n"


def test_a_new_file_whose_name_appears_as_a_link_meanwhile_is_refused(tmp_path: Path) -> None:
    project, secret = _project(tmp_path)
    args = {"path": "fresh.txt", "content": "approved\n"}
    _asked_then_run(
        WriteFileTool(), args, project, lambda: (project / "fresh.txt").symlink_to(secret)
    )
    assert secret.read_text() == "keep\n"
    dangling = tmp_path / "outside" / "new.txt"
    args = {"path": "fresh2.txt", "content": "approved\n"}
    _asked_then_run(
        WriteFileTool(), args, project, lambda: (project / "fresh2.txt").symlink_to(dangling)
    )
    assert not dangling.exists()


def test_a_folder_swapped_for_a_link_outside_is_refused(tmp_path: Path) -> None:
    project, secret = _project(tmp_path)
    for folder in (secret.parent / "sub", project / "docs" / "sub"):
        folder.mkdir(parents=True)
        (folder / "secret.txt").write_text("keep\n")
    for shown in ("docs/sub/secret.txt", "docs/secret.txt"):  # a folder above, the last one
        (project / "docs" / "secret.txt").write_text("keep\n")
        args = {"path": shown, "edits": [{"old": "keep", "new": "approved"}]}

        def swap() -> None:
            shutil.rmtree(project / "docs")
            (project / "docs").symlink_to(secret.parent)

        output = _asked_then_run(EditFileTool(), args, project, swap)
        assert "folder" in output
        (project / "docs").unlink()
        shutil.copytree(secret.parent, project / "docs")
    assert secret.read_text() == "keep\n"
    assert (secret.parent / "sub" / "secret.txt").read_text() == "keep\n"


def test_a_name_swapped_for_a_fifo_or_a_hard_link_is_refused(tmp_path: Path) -> None:
    project, secret = _project(tmp_path / "fifo")
    notes = project / "notes.txt"
    _asked_then_run(WriteFileTool(), WRITE, project, lambda: (notes.unlink(), os.mkfifo(notes)))
    project, secret = _project(tmp_path / "link")
    notes = project / "notes.txt"
    output = _asked_then_run(
        EditFileTool(), EDIT, project, lambda: (notes.unlink(), os.link(secret, notes))
    )
    assert "hard links" in output
    assert secret.read_text() == "keep\n"


_EDITOR = """
import sys
from pathlib import Path
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.edit_file import EditFileTool
project, who = Path(sys.argv[1]), sys.argv[2]
tool = EditFileTool()
for k in range(40):
    args = {"path": "shared.txt", "edits": [{"old": f"# end {who}\\n", "new": f"{who} {k}\\n# end {who}\\n"}]}
    ctx = ToolContext(cwd=project)
    tool.preview(args, ctx)  # the plan is computed on what is on disk now
    result = tool.run(args, ctx)
    print(k, result.status.name, flush=True)
"""


def test_two_processes_editing_one_file_lose_no_edit_reported_applied(tmp_path: Path) -> None:
    shared = tmp_path / "shared.txt"
    shared.write_text("# end a\n# end b\n")
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    editors = [
        subprocess.Popen(
            [sys.executable, "-c", _EDITOR, str(tmp_path), who],
            stdout=subprocess.PIPE,
            text=True,
            env=environment,
        )
        for who in ("a", "b")
    ]
    reports = [editor.communicate(timeout=300)[0] for editor in editors]
    assert all(editor.returncode == 0 for editor in editors)
    lines = shared.read_text().splitlines()
    for who, report in zip(("a", "b"), reports, strict=True):
        statuses = dict(line.split() for line in report.splitlines())
        assert len(statuses) == 40
        applied = {k for k, status in statuses.items() if status == "DONE"}
        present = {line.split()[1] for line in lines if line.startswith(f"{who} ")}
        assert applied == present, f"{who}: applied but lost {sorted(applied - present)}"
    assert len(lines) == 82


def test_a_new_file_that_another_program_creates_meanwhile_is_not_overwritten(
    tmp_path: Path,
) -> None:
    project, _ = _project(tmp_path)
    args = {"path": "fresh.txt", "content": "approved\n"}
    output = _asked_then_run(
        WriteFileTool(), args, project, lambda: (project / "fresh.txt").write_text("theirs\n")
    )
    assert "appeared" in output
    assert (project / "fresh.txt").read_text() == "theirs\n"
