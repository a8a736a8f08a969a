"""read_file on real files (SPEC §4, tools-reference `read_file`)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.line_slice import LineSlice, PastEnd, read_line_slice
from mm_tui.agent.tools.read_file import ReadFileTool


def read(cwd: Path, max_output: int = 10_000, **args: object):
    return ReadFileTool().run(dict(args), ToolContext(cwd=cwd, max_output=max_output))


@pytest.fixture
def three_lines(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("alpha\nbeta\ngamma\n")
    return tmp_path


def test_a_whole_file_comes_back_as_it_is(three_lines: Path) -> None:
    result = read(three_lines, path="a.txt")
    assert result.output == "alpha\nbeta\ngamma\n"
    assert result.status is ToolStatus.DONE


def test_a_file_without_a_final_newline_gets_none_added(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("alpha\nbeta")
    assert read(tmp_path, path="b.txt").output == "alpha\nbeta"


def test_a_slice_that_stops_before_the_end_has_no_final_newline(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", start=1, end=2).output == "alpha\nbeta"


def test_a_slice_that_shows_the_end_keeps_the_final_newline(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", start=2).output == "beta\ngamma\n"
    assert read(three_lines, path="a.txt", start=3, end=3).output == "gamma\n"


def test_an_end_past_the_last_line_reads_to_the_end(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", start=2, end=99).output == "beta\ngamma\n"


def test_zero_means_from_the_start_and_to_the_end(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", start=0, end=0).output == "alpha\nbeta\ngamma\n"


def test_numbered_output_is_exactly_cat_n(three_lines: Path) -> None:
    cat_n = subprocess.run(["cat", "-n", "a.txt"], cwd=three_lines, capture_output=True)
    assert read(three_lines, path="a.txt", numbered=True).output == cat_n.stdout.decode()


def test_numbered_slices_carry_the_file_line_numbers(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", start=2, end=2, numbered=True).output == "     2\tbeta"


def test_a_missing_file_says_to_create_it_with_write_file(tmp_path: Path) -> None:
    result = read(tmp_path, path="src/nope.py")
    assert result.output == "src/nope.py does not exist. Create it with write_file"
    assert result.status is ToolStatus.FAILED


def test_a_start_past_the_end_says_how_long_the_file_is(three_lines: Path) -> None:
    result = read(three_lines, path="a.txt", start=9)
    assert result.output == "[error: a.txt has 3 lines; start 9 is past the end]"
    assert result.status is ToolStatus.FAILED


def test_an_end_before_the_start_is_refused(three_lines: Path) -> None:
    result = read(three_lines, path="a.txt", start=3, end=2)
    assert result.output == '[error: read_file "end" (2) is before "start" (3)]'


def test_a_negative_line_is_refused(three_lines: Path) -> None:
    result = read(three_lines, path="a.txt", start=-1)
    assert result.output == '[error: read_file needs "start" (a line number, 0 or more)]'


def test_an_empty_file_says_it_is_empty(tmp_path: Path) -> None:
    (tmp_path / "empty.txt").write_bytes(b"")
    result = read(tmp_path, path="empty.txt")
    assert result.output == "empty.txt is empty"
    assert result.status is ToolStatus.DONE


def test_a_binary_file_gets_one_line_instead_of_garbage(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x7fELF\x00\x01\x02" + bytes(range(256)))
    result = read(tmp_path, path="blob.bin")
    assert result.output == "blob.bin is a binary file (263 bytes); read_file shows text files only"
    assert result.status is ToolStatus.FAILED


def test_a_directory_gets_its_listing(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "pkg").mkdir()
    (tmp_path / "src" / "b.py").write_text("")
    (tmp_path / "src" / "a.py").write_text("")
    result = read(tmp_path, path="src")
    assert result.output == "src is a directory; its entries:\na.py\nb.py\npkg/"


def test_an_empty_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "void").mkdir()
    assert read(tmp_path, path="void").output == "void is an empty directory"


def test_invalid_utf8_is_shown_with_replacement_characters(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes(b"caf\xe9\n")
    assert read(tmp_path, path="latin.txt").output == "caf\ufffd\n"


def test_a_long_output_is_cut_between_lines_and_says_where_to_read_on(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    result = read(tmp_path, max_output=100, path="long.txt")
    shown, note = result.output.rsplit("\n", 1)
    assert len(shown) <= 100
    assert shown == "\n".join(f"line {n}" for n in range(1, 14))
    assert note == '[output truncated: lines 14-1000 not shown; read them with "start": 14]'


def test_a_cut_slice_counts_the_lines_left_up_to_its_end(tmp_path: Path) -> None:
    (tmp_path / "long.txt").write_text("".join(f"line {n}\n" for n in range(1, 1001)))
    result = read(tmp_path, max_output=30, path="long.txt", start=500, end=600)
    assert result.output == (
        "line 500\nline 501\nline 502\n"
        '[output truncated: lines 503-600 not shown; read them with "start": 503]'
    )


def test_a_line_longer_than_max_output_is_cut_inside(tmp_path: Path) -> None:
    (tmp_path / "min.js").write_text("x" * 50 + "\nsecond\n")
    result = read(tmp_path, max_output=10, path="min.js")
    assert result.output == (
        "xxxxxxxxxx\n[output truncated: line 1 is cut after 10 characters; lines 2-2 not shown]"
    )


def test_crlf_line_ends_are_kept(tmp_path: Path) -> None:
    (tmp_path / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    assert read(tmp_path, path="win.txt", start=1, end=1).output == "one\r"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, '[error: read_file needs "path" (a string)]'),
        ({"path": 7}, '[error: read_file needs "path" (a string)]'),
        ({"path": "a.txt", "start": "first"}, '[error: read_file needs "start" (a whole number)]'),
        ({"path": "a.txt", "end": True}, '[error: read_file needs "end" (a whole number)]'),
        (
            {"path": "a.txt", "numbered": "yes"},
            '[error: read_file needs "numbered" (true or false)]',
        ),
    ],
)
def test_wrong_arguments_name_the_field(three_lines: Path, args: dict, message: str) -> None:
    result = ReadFileTool().run(args, ToolContext(cwd=three_lines))
    assert result.output == message
    assert result.status is ToolStatus.FAILED


def test_common_slips_in_argument_types_are_understood(three_lines: Path) -> None:
    result = read(three_lines, path=" `a.txt` ", start="2", end=2.0, numbered="true")
    assert result.output == "     2\tbeta"


def test_the_title_shows_the_path_and_the_range() -> None:
    tool = ReadFileTool()
    assert tool.title({"path": "src/a.py"}) == "read_file src/a.py"
    assert tool.title({"path": "src/a.py", "start": 10, "end": 20}) == "read_file src/a.py:10-20"
    assert tool.title({"path": "src/a.py", "start": 10}) == "read_file src/a.py:10-"
    assert tool.title({"path": "src/a.py", "end": "5"}) == "read_file src/a.py:1-5"
    assert not tool.needs_permission({"path": "a"})


def test_the_file_is_read_from_disk_on_every_call(three_lines: Path) -> None:
    assert read(three_lines, path="a.txt", end=1).output == "alpha"
    (three_lines / "a.txt").write_text("changed\n")
    assert read(three_lines, path="a.txt", end=1).output == "changed\n"


# -- the slicer, against a plain reference, over small blocks to cross block edges -----------


def reference_slice(data: bytes, start: int, end: int) -> tuple[list[bytes], bool] | int:
    """Lines start..end as split by Python, and whether they reach the end of the file."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    first = max(start, 1)
    if first > len(lines):
        return len(lines)
    last = len(lines) if end == 0 else min(end, len(lines))
    return lines[first - 1 : last], last == len(lines)


@settings(max_examples=400, deadline=None)
@given(
    data=st.lists(st.sampled_from([b"a", b"bc", b"\n", b"\n\n", b"\xc3\xa9"]), max_size=40).map(
        b"".join
    ),
    start=st.integers(0, 30),
    length=st.integers(-1, 30),
    block=st.integers(1, 9),
    budget=st.integers(1, 200),
)
def test_the_slicer_agrees_with_a_plain_split(
    data: bytes, start: int, length: int, block: int, budget: int
) -> None:
    end = 0 if length < 0 else max(start, 1) + length
    found = read_line_slice(io.BytesIO(data), start, end, budget, block_bytes=block)
    expected = reference_slice(data, start, end)
    if isinstance(expected, int):
        assert found == PastEnd(expected)
        return
    lines, reaches_end = expected
    assert isinstance(found, LineSlice)
    assert found.first_line == max(start, 1)
    assert found.last_line == found.first_line + len(lines) - 1
    assert found.reaches_end == reaches_end
    on_disk = b"\n".join(lines) + (b"\n" if data.endswith(b"\n") or not reaches_end else b"")
    if found.complete:
        assert found.data == on_disk
    else:
        assert len(found.data) >= budget
        assert on_disk.startswith(found.data)
