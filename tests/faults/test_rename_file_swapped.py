"""An lsp rename writes exactly the files it read, never through a name swapped meanwhile.

A rename writes several files one after the other, and mm-tui keeps each for `/undo` just
before writing it: meanwhile a background command (or any program of the person's) can swap
a name for a hard link to a file outside the project holding the same text, or swap a file
already written for a symbolic link out of the project. The rename then must neither write
the outside file nor "restore" through the link. Here the swap happens at that moment (the
keeping hook), the rename comes from a small language server over the wire
(tests/lsp/fixtures/splitting_rename_server.py), and mm-tui's files are checked afterwards.
Each test fails with the rename written by a path (support/atomic_write.py) instead of the
guarded write (lsp/rename_write.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mm_tui.lsp.answers import Answer
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.rename_write import FilesRefused, write_changes
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from mm_tui.lsp.workspace_edit import plan_changes

FIXTURES = Path(__file__).resolve().parents[1] / "lsp" / "fixtures"
FILES = {
    "a.py": b"from c import greet\n\nprint(greet(1))\n",
    "b.py": b"from c import greet\n\nvalue = greet(2)\n",
    "c.py": b"def greet(n):\n    return n\n",
}
SECRET = b"outside: not to be written\n"

pytestmark = pytest.mark.timeout(120)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    project, outside = tmp_path / "project", tmp_path / "outside"
    project.mkdir()
    outside.mkdir()
    for name, data in FILES.items():
        (project / name).write_bytes(data)
    return project, outside


def _rename(project: Path, meanwhile: Callable[[Path], None]) -> Answer:
    """greet → salute: the question's preview, then the run with `meanwhile` told each file
    just before it is written (where the agent keeps it for `/undo`)."""
    command = (sys.executable, str(FIXTURES / "splitting_rename_server.py"), "-", "0")
    spec = LspServerSpec(name="splitting", command=command, extensions=(".py",))
    workspace = LspWorkspace([spec], project)
    try:
        query = LspQuery("rename", "c.py", "greet", new_name="salute")
        shown = workspace.preview(query)
        assert shown.diff, shown  # type: ignore[union-attr]
        answer = workspace.execute(
            query,
            before_write=meanwhile,
            shown_diff=shown.diff,  # type: ignore[union-attr]
        )
    finally:
        workspace.close()
    return answer


def test_a_name_swapped_for_a_hard_link_to_an_outside_file_is_not_written_through(
    tmp_path: Path,
) -> None:
    project, outside = _project(tmp_path)
    secret = outside / "b.py"
    secret.write_bytes(FILES["b.py"])  # the same text: no content check can tell

    def meanwhile(path: Path) -> None:
        if path.name == "b.py":
            (project / "b.py").unlink()
            os.link(secret, project / "b.py")

    answer = _rename(project, meanwhile)
    assert secret.read_bytes() == FILES["b.py"], answer
    assert answer.text == (
        "[lsp: rename failed: b.py not written: it was replaced by a file with other hard "
        "links after the question was asked — every file was restored]"
    )
    assert (project / "a.py").read_bytes() == FILES["a.py"]  # written, then restored
    assert (project / "c.py").read_bytes() == FILES["c.py"]


def test_a_written_file_swapped_for_a_link_outside_is_not_restored_through_it(
    tmp_path: Path,
) -> None:
    project, outside = _project(tmp_path)
    secret = outside / "a.py"
    secret.write_bytes(SECRET)

    def meanwhile(path: Path) -> None:
        if path.name == "b.py":  # a.py is written by now
            (project / "a.py").unlink()
            (project / "a.py").symlink_to(secret)
            (project / "b.py").write_bytes(FILES["b.py"] + b"# the person's own edit\n")

    answer = _rename(project, meanwhile)
    assert secret.read_bytes() == SECRET, answer
    assert answer.text.splitlines() == [
        "[lsp: rename failed: b.py not written: its content changed after it was read "
        "(another program wrote it) — every other file was restored; these were no longer "
        "the files written, so they were left as they are:]",
        "a.py: it became a symbolic link after the question was asked",
    ]
    assert (project / "b.py").read_bytes() == FILES["b.py"] + b"# the person's own edit\n"
    assert (project / "c.py").read_bytes() == FILES["c.py"]


def test_files_swapped_before_the_write_are_each_named_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    project, outside = _project(tmp_path)
    edits = {
        (project / name).as_uri(): [
            {
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                "newText": "# renamed\n",
            }  # fmt: skip
        ]
        for name in FILES
    }
    changes = plan_changes({"changes": edits}, project, "utf-16")
    (outside / "a.py").write_bytes(SECRET)
    (project / "a.py").unlink()
    (project / "a.py").symlink_to(outside / "a.py")
    (outside / "c.py").write_bytes(FILES["c.py"])
    (project / "c.py").unlink()
    os.link(outside / "c.py", project / "c.py")
    with pytest.raises(FilesRefused) as refused:
        write_changes(changes, "", None, project)
    assert refused.value.lines == [
        "a.py: it became a symbolic link after the question was asked",
        "c.py: it was replaced by a file with other hard links after the question was asked",
    ]
    assert refused.value.total == 3
    assert (project / "b.py").read_bytes() == FILES["b.py"]  # the one still fine: untouched
    assert (outside / "a.py").read_bytes() == SECRET
    assert (outside / "c.py").read_bytes() == FILES["c.py"]
