"""edit_file on real files: every rule and string of SPEC §4 and tools-reference `edit_file`."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from unidiff import PatchSet

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.edit_file import EditFileTool

SOURCE = (
    "def greet(name):\n"  # 1
    '    return "hi " + name\n'  # 2
    "\n"  # 3
    "\n"  # 4
    "def add(a, b):\n"  # 5
    "    return a - b\n"  # 6
    "\n"  # 7
    "x = 1\n"  # 8
    "x = 1\n"  # 9
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text(SOURCE)
    return tmp_path


def edit(cwd: Path, *edits: tuple[str, str], max_output: int = 10_000, **more: object):
    args = {"path": "a.py", "edits": [{"old": old, "new": new} for old, new in edits], **more}
    return EditFileTool().run(args, ToolContext(cwd=cwd, max_output=max_output))


def snapshot(path: Path) -> tuple[bytes, int, int]:
    info = os.stat(path)
    return path.read_bytes(), info.st_ino, info.st_mtime_ns


def test_one_edit_is_applied_with_a_header_and_a_numbered_diff(project: Path) -> None:
    result = edit(project, ("    return a - b\n", "    return a + b\n"))
    assert (project / "a.py").read_text() == SOURCE.replace("a - b", "a + b")
    assert result.status is ToolStatus.DONE
    assert result.output == (
        "edited a.py: 1 edit applied, +1 -1 lines, first change at line 6\n"
        "@@ -3,7 +3,7 @@\n"
        "  3 | \n"
        "  4 | \n"
        "  5 | def add(a, b):\n"
        "- 6 |     return a - b\n"
        "+ 6 |     return a + b\n"
        "  7 | \n"
        "  8 | x = 1\n"
        "  9 | x = 1"
    )


def test_the_window_gets_a_unified_diff_it_can_parse(project: Path) -> None:
    result = edit(project, ("def greet(name):\n", "def greet(name, loud=False):\n    pass\n"))
    assert result.diff is not None
    assert result.diff.startswith("--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,5 @@\n")
    patch = PatchSet(result.diff)
    assert (patch[0].added, patch[0].removed) == (2, 1)


def test_an_old_text_found_twice_is_refused_with_the_lines_where_it_is(project: Path) -> None:
    before = snapshot(project / "a.py")
    result = edit(project, ("x = 1", "x = 2"))
    assert result.status is ToolStatus.FAILED
    assert result.output == (
        "nothing was written to a.py: the edit was refused\n"
        "old text appears 2 times (lines 8, 9) — to change ONE of them, include its "
        "surrounding lines in old until the text is unique; to change several, send one "
        "edit per place"
    )
    assert snapshot(project / "a.py") == before


def test_many_occurrences_list_the_first_ten_lines(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("pass\n" * 30)
    result = edit(tmp_path, ("pass", "return"))
    assert "old text appears 30 times (lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, …) — " in (
        result.output
    )


def test_overlapping_occurrences_count_as_ambiguous(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("aaa\n")
    assert "old text appears 2 times (lines 1, 1)" in edit(tmp_path, ("aa", "b")).output


def test_overlapping_edits_are_refused_and_nothing_is_written(project: Path) -> None:
    before = snapshot(project / "a.py")
    result = edit(
        project,
        ("def add(a, b):\n    return", "def add(a, b):\n    yield"),
        ("return a - b", "return a * b"),
    )
    assert result.output == (
        "nothing was written to a.py: 1 of 2 edits were refused\n"
        "edit 2: it overlaps edit 1 (both change line 6); merge the two into one edit"
    )
    assert snapshot(project / "a.py") == before


def test_an_edit_nested_inside_another_is_refused(project: Path) -> None:
    result = edit(project, ("def add(a, b):\n    return a - b\n", "pass\n"), ("a - b", "a + b"))
    assert result.output.endswith("edit 2: it lies inside edit 1; merge the two into one edit")
    assert (project / "a.py").read_text() == SOURCE


def test_a_repeated_edit_is_refused(project: Path) -> None:
    result = edit(project, ("a - b", "a + b"), ("a - b", "a + b"))
    assert result.output.endswith("edit 2: it repeats edit 1; send each change once")
    assert (project / "a.py").read_text() == SOURCE


def test_edits_are_resolved_against_the_original_never_in_cascade(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("alpha beta\n")
    result = edit(tmp_path, ("alpha", "beta"), ("beta", "gamma"))
    assert result.status is ToolStatus.DONE
    assert (tmp_path / "a.py").read_text() == "beta gamma\n"


def test_one_refused_edit_among_good_ones_writes_nothing(project: Path) -> None:
    before = snapshot(project / "a.py")
    result = edit(project, ("a - b", "a + b"), ("missing text", "x"), ("greet", "hello"))
    assert result.output.startswith("nothing was written to a.py: 1 of 3 edits were refused\n")
    assert "edit 2: old text not found in a.py" in result.output
    assert snapshot(project / "a.py") == before


def test_several_edits_report_the_first_changed_line_and_the_totals(project: Path) -> None:
    result = edit(
        project, ("x = 1\nx = 1\n", "x = 1\n"), ('"hi "', '"hello "'), ("def add", "def plus")
    )
    assert result.output.splitlines()[0] == (
        "edited a.py: 3 edits applied, +2 -3 lines, first change at line 2"
    )


def test_a_dry_run_reports_the_diff_and_writes_nothing(project: Path) -> None:
    before = snapshot(project / "a.py")
    result = edit(project, ("a - b", "a + b"), dry_run=True)
    assert result.output.splitlines()[0] == (
        "dry run, nothing written: 1 edit would apply to a.py, +1 -1 lines, first change at line 6"
    )
    assert "+ 6 |     return a + b" in result.output
    assert result.diff is not None
    assert snapshot(project / "a.py") == before


def test_an_old_text_with_other_whitespace_points_at_the_lines_to_copy(project: Path) -> None:
    result = edit(project, ("def add(a, b):\n  return a - b", "x"))
    assert result.output == (
        "nothing was written to a.py: the edit was refused\n"
        "old text not found in a.py, but lines 5-6 match it except for whitespace "
        "(indentation, tabs or trailing spaces); copy old exactly from them, without the "
        "numbers:\n"
        "     5\tdef add(a, b):\n"
        "     6\t    return a - b"
    )


def test_an_old_text_slightly_wrong_answers_the_closest_lines(project: Path) -> None:
    result = edit(project, ("def add(a, c):\n    return a - c", "x"))
    assert result.output == (
        "nothing was written to a.py: the edit was refused\n"
        "old text not found in a.py. The closest lines in the file are below; copy old "
        "exactly from them, without the numbers, or read_file a.py again:\n"
        "     5\tdef add(a, b):\n"
        "     6\t    return a - b"
    )


def test_an_old_text_like_nothing_in_the_file_says_to_read_it_again(project: Path) -> None:
    result = edit(project, ("class Zebra(Protocol):", "x"))
    assert result.output.endswith(
        "old text not found in a.py, and no line of the file resembles it; "
        "read_file a.py to see its current text"
    )


def test_line_numbers_copied_into_old_are_pointed_out(project: Path) -> None:
    result = edit(project, ("     5\tdef add(a, b):\n     6\t    return a - b", "x"))
    assert result.output.endswith(
        "old text not found in a.py: its lines start with line numbers copied from "
        "read_file or a diff; send old without them"
    )


def test_an_empty_old_is_refused_with_how_to_insert(project: Path) -> None:
    result = edit(project, ("", "import os\n"))
    assert result.output.endswith(
        "old is empty; to insert text, put the neighbouring line in old and write it again "
        "in new together with your text"
    )
    assert (project / "a.py").read_text() == SOURCE


def test_edits_that_change_nothing_write_nothing_and_say_so(project: Path) -> None:
    before = snapshot(project / "a.py")
    result = edit(project, ("a - b", "a - b"))
    assert result.output == (
        "the edits leave a.py unchanged (each new equals its old); nothing was written"
    )
    assert snapshot(project / "a.py") == before


def test_a_crlf_file_accepts_an_old_written_with_lf_and_stays_crlf(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = edit(tmp_path, ("one\ntwo\n", "one\n2\n"))
    assert result.status is ToolStatus.DONE
    assert (tmp_path / "a.py").read_bytes() == b"one\r\n2\r\nthree\r\n"


def test_bytes_that_are_not_utf8_survive_an_edit_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"# caf\xe9\nvalue = 1\n")
    edit(tmp_path, ("value = 1", "value = 2"))
    assert (tmp_path / "a.py").read_bytes() == b"# caf\xe9\nvalue = 2\n"


def test_the_write_is_atomic_and_keeps_the_mode(project: Path) -> None:
    target = project / "a.py"
    target.chmod(0o754)
    inode = os.stat(target).st_ino
    edit(project, ("a - b", "a + b"))
    assert os.stat(target).st_ino != inode
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o754
    assert [p.name for p in project.iterdir()] == ["a.py"]


def test_a_missing_file_says_to_create_it_with_write_file(tmp_path: Path) -> None:
    result = edit(tmp_path, ("a", "b"))
    assert result.output == "a.py does not exist. Create it with write_file"
    assert result.status is ToolStatus.FAILED


def test_a_binary_file_is_not_edited(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(b"\x00\x01text")
    result = edit(tmp_path, ("text", "other"))
    assert result.output == "[error: a.py is a binary file; edit_file edits text files only]"


def test_a_directory_is_not_edited(tmp_path: Path) -> None:
    (tmp_path / "a.py").mkdir()
    result = edit(tmp_path, ("text", "other"))
    assert result.output == "[error: a.py is a directory; edit_file edits one file]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"edits": []}, '[error: edit_file needs "path" (a string)]'),
        ({"path": "a.py"}, '[error: edit_file needs "edits" (an array of {"old": "...", "new": "..."})]'),
        ({"path": "a.py", "edits": []}, '[error: edit_file needs "edits" (an array of {"old": "...", "new": "..."})]'),
        ({"path": "a.py", "edits": "not json"}, '[error: edit_file needs "edits" (an array of {"old": "...", "new": "..."})]'),
        ({"path": "a.py", "edits": ["x"]}, '[error: edit_file needs "edits" (an array of {"old": "...", "new": "..."})]'),
        ({"path": "a.py", "edits": [{"new": "x"}]}, '[error: edit_file edit 1 needs "old" (a string)]'),
        ({"path": "a.py", "edits": [{"old": "a", "new": "b"}, {"old": "c"}]}, '[error: edit_file edit 2 needs "new" (a string; "" deletes old)]'),
        ({"path": "a.py", "edits": [{"old": "a", "new": "b"}], "dry_run": "maybe"}, '[error: edit_file needs "dry_run" (true or false)]'),
    ],
)  # fmt: skip
def test_wrong_arguments_name_the_field(project: Path, args: dict, message: str) -> None:
    result = EditFileTool().run(args, ToolContext(cwd=project))
    assert (result.output, result.status) == (message, ToolStatus.FAILED)
    assert (project / "a.py").read_text() == SOURCE


@pytest.mark.parametrize(
    "edits",
    [
        '[{"old": "a - b", "new": "a + b"}]',
        {"old": "a - b", "new": "a + b"},
    ],
)
def test_edits_sent_as_a_json_string_or_a_single_object_are_understood(
    project: Path, edits: object
) -> None:
    result = EditFileTool().run({"path": "a.py", "edits": edits}, ToolContext(cwd=project))
    assert result.status is ToolStatus.DONE
    assert "a + b" in (project / "a.py").read_text()


def test_a_single_old_and_new_at_the_top_level_are_understood(project: Path) -> None:
    args = {"path": "a.py", "old": "a - b", "new": "a + b"}
    assert EditFileTool().run(args, ToolContext(cwd=project)).status is ToolStatus.DONE


def test_the_preview_carries_the_diff_and_a_refusal_carries_its_reason(project: Path) -> None:
    tool = EditFileTool()
    ctx = ToolContext(cwd=project)
    good = {"path": "a.py", "edits": [{"old": "a - b", "new": "a + b"}]}
    preview = tool.preview(good, ctx)
    assert preview.title == "edit_file a.py"
    assert preview.detail == "1 edit to a.py: +1 -1 lines, first change at line 6"
    assert preview.diff is not None and "-    return a - b\n+    return a + b\n" in preview.diff
    refused = tool.preview({"path": "a.py", "edits": [{"old": "x = 1", "new": "y"}]}, ctx)
    assert refused.diff is None
    assert "old text appears 2 times (lines 8, 9)" in refused.detail
    assert (project / "a.py").read_text() == SOURCE


def test_permission_is_not_asked_for_a_dry_run_a_refusal_or_bad_arguments(project: Path) -> None:
    tool = EditFileTool()
    ctx = ToolContext(cwd=project)
    good = {"path": "a.py", "edits": [{"old": "a - b", "new": "a + b"}]}
    assert tool.rejection_text == "[edit rejected by the user]"
    assert tool.needs_permission(good)
    assert tool.needs_permission(good, ctx)
    assert not tool.needs_permission({**good, "dry_run": True})
    assert not tool.needs_permission({"path": "a.py", "edits": [{"old": "x = 1", "new": "y"}]}, ctx)
    assert not tool.needs_permission({"path": "a.py"})


def test_the_output_is_cut_to_max_output(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("start\n")
    result = edit(tmp_path, ("start\n", "".join(f"row {n}\n" for n in range(500))), max_output=300)
    assert result.output.endswith(" more characters not shown]")
    assert len((tmp_path / "a.py").read_text().splitlines()) == 500


def test_the_title_names_the_file_and_the_schema_teaches_the_method() -> None:
    tool = EditFileTool()
    assert tool.title({"path": "src/a.py", "edits": []}) == "edit_file src/a.py"
    description = tool.schema()["function"]["description"]
    assert "Read the file first" in description
    assert "One edit per place" in description
    assert 'Example: {"path": ' in description
