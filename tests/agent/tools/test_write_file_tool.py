"""write_file and the atomic write under it, on real files (SPEC §4)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from unidiff import PatchSet

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.write_file import WriteFileTool


def write(cwd: Path, max_output: int = 10_000, **args: object):
    return WriteFileTool().run(dict(args), ToolContext(cwd=cwd, max_output=max_output))


def test_a_new_file_is_created_with_its_parents_and_a_diff_from_empty(tmp_path: Path) -> None:
    result = write(tmp_path, path="src/pkg/hello.py", content="print('hi')\nprint('bye')\n")
    assert (tmp_path / "src/pkg/hello.py").read_text() == "print('hi')\nprint('bye')\n"
    assert result.status is ToolStatus.DONE
    assert result.output == (
        "created src/pkg/hello.py: 2 lines\n@@ -0,0 +1,2 @@\n+ 1 | print('hi')\n+ 2 | print('bye')"
    )
    assert result.diff is not None
    assert result.diff.startswith("--- /dev/null\n+++ b/src/pkg/hello.py\n")
    patch = PatchSet(result.diff)
    assert (patch[0].added, patch[0].removed) == (2, 0)


def test_an_existing_file_is_replaced_whole_and_the_diff_shows_the_change(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\nthree\n")
    result = write(tmp_path, path="a.txt", content="one\n2\nthree\n")
    assert (tmp_path / "a.txt").read_text() == "one\n2\nthree\n"
    assert result.output == (
        "wrote a.txt: +1 -1 lines, first change at line 2\n"
        "@@ -1,3 +1,3 @@\n"
        "  1 | one\n"
        "- 2 | two\n"
        "+ 2 | 2\n"
        "  3 | three"
    )
    assert result.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"


def test_identical_content_is_not_rewritten_and_the_result_says_so(tmp_path: Path) -> None:
    target = tmp_path / "same.txt"
    target.write_text("stable\n")
    before = os.stat(target)
    result = write(tmp_path, path="same.txt", content="stable\n")
    after = os.stat(target)
    assert result.output == "same.txt already has exactly this content; nothing was written"
    assert result.status is ToolStatus.DONE
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)


def test_the_write_is_atomic_a_rename_leaving_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "a.txt"
    target.write_text("old\n")
    inode = os.stat(target).st_ino
    write(tmp_path, path="a.txt", content="new\n")
    assert os.stat(target).st_ino != inode, "the file was rewritten in place, not renamed over"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]


def test_the_mode_of_an_existing_file_is_kept(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o751)
    write(tmp_path, path="run.sh", content="#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(os.stat(script).st_mode) == 0o751


def test_a_new_file_gets_the_usual_mode_under_the_umask(tmp_path: Path) -> None:
    umask = os.umask(0o022)
    try:
        write(tmp_path, path="fresh.txt", content="x\n")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "fresh.txt").st_mode) == 0o644


def test_a_symbolic_link_stays_a_link_and_its_target_changes(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("before\n")
    (tmp_path / "link.txt").symlink_to("real.txt")
    write(tmp_path, path="link.txt", content="after\n")
    assert (tmp_path / "link.txt").is_symlink()
    assert (tmp_path / "real.txt").read_text() == "after\n"


FAILING_WRITE = """
import resource, signal, sys
from pathlib import Path
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.write_file import WriteFileTool
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write then fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))
result = WriteFileTool().run({"path": "a.txt", "content": "x" * 100}, ToolContext(cwd=Path.cwd()))
print(result.status.value)
print(result.output)
"""


def test_a_failed_write_leaves_the_original_and_no_temporary(tmp_path: Path) -> None:
    # A file-size limit makes the write fail half-way, even for root (whom modes do not stop).
    (tmp_path / "a.txt").write_text("kept\n")
    child = subprocess.run(
        [sys.executable, "-c", FAILING_WRITE], cwd=tmp_path, capture_output=True, text=True
    )
    assert child.stdout == "failed\n[error: cannot write a.txt: File too large]\n", child.stderr
    assert (tmp_path / "a.txt").read_text() == "kept\n"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_a_directory_is_not_overwritten(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    result = write(tmp_path, path="src", content="x")
    assert result.output == "[error: src is a directory; write_file writes files]"
    assert (tmp_path / "src").is_dir()


def test_the_preview_shows_the_diff_and_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    preview = WriteFileTool().preview(
        {"path": "a.txt", "content": "uno\n"}, ToolContext(cwd=tmp_path)
    )
    assert preview.title == "write_file a.txt"
    assert preview.detail == "wrote a.txt: +1 -1 lines, first change at line 1"
    assert preview.diff == "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+uno\n"
    assert (tmp_path / "a.txt").read_text() == "one\n"


def test_permission_is_asked_only_for_a_write_that_changes_the_disk(tmp_path: Path) -> None:
    tool = WriteFileTool()
    ctx = ToolContext(cwd=tmp_path)
    (tmp_path / "a.txt").write_text("same\n")
    assert tool.rejection_text == "[edit rejected by the user]"
    assert tool.needs_permission({"path": "a.txt", "content": "other\n"})
    assert tool.needs_permission({"path": "a.txt", "content": "other\n"}, ctx)
    assert not tool.needs_permission({"path": "a.txt", "content": "same\n"}, ctx)
    assert not tool.needs_permission({"path": "a.txt"})


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"content": "x"}, '[error: write_file needs "path" (a string)]'),
        ({"path": "a.txt"}, '[error: write_file needs "content" (a string)]'),
        ({"path": "a.txt", "content": ["x"]}, '[error: write_file needs "content" (a string)]'),
    ],
)
def test_wrong_arguments_name_the_field(tmp_path: Path, args: dict, message: str) -> None:
    result = WriteFileTool().run(args, ToolContext(cwd=tmp_path))
    assert (result.output, result.status) == (message, ToolStatus.FAILED)
    assert list(tmp_path.iterdir()) == []


def test_a_large_new_file_is_reported_within_max_output(tmp_path: Path) -> None:
    content = "".join(f"row {n}\n" for n in range(5000))
    result = write(tmp_path, max_output=200, path="big.txt", content=content)
    assert (tmp_path / "big.txt").read_text() == content
    assert result.output.startswith("created big.txt: 5000 lines\n")
    assert result.output.endswith(" more characters not shown]")
    assert result.diff is not None and result.diff.count("\n+row ") == 5000


def test_the_title_names_the_file() -> None:
    assert WriteFileTool().title({"path": "src/a.py", "content": "x"}) == "write_file src/a.py"


def test_a_lone_surrogate_from_the_model_is_written_as_a_replacement_character(
    tmp_path: Path,
) -> None:
    result = write(tmp_path, path="odd.txt", content="a\ud800b\n")
    assert result.status is ToolStatus.DONE
    assert (tmp_path / "odd.txt").read_bytes() == "a\ufffdb\n".encode()
    assert "a\ufffdb" in result.output
