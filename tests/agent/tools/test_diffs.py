"""The two diff forms: applying the unified one to the old text gives the new text, and every
numbered line carries its true line number (hypothesis)."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from unidiff import PatchSet

from mm_tui.agent.tools.diffs import (
    Replacement,
    apply_replacements,
    diff_replacements,
    diff_texts,
    split_lines,
)

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")
NUMBERED_ROW = re.compile(r"^([ +-]) +(\d+) \| (.*)$")
LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "a", "b b\n"]), max_size=25)


def patch(old: str, unified: str) -> str:
    """Apply a unified diff with a small strict reader (it checks context and removals)."""
    old_lines = split_lines(old)
    rows = unified.split("\n")[2:]
    result: list[str] = []
    cursor = 0
    last_added: int | None = None
    for row in rows[:-1] if rows and rows[-1] == "" else rows:
        header = HUNK_HEADER.match(row)
        if header:
            start, length = int(header[1]), int(header[2] or 1)
            begin = start - 1 if length else start
            result += old_lines[cursor:begin]
            cursor = begin
            continue
        if row == "\\ No newline at end of file":
            if last_added is not None:
                result[last_added] = result[last_added].removesuffix("\n")
            continue
        sign, text = row[0], row[1:]
        last_added = None
        if sign in " -":
            assert old_lines[cursor].rstrip("\n") == text
            if sign == " ":
                result.append(old_lines[cursor])
                last_added = len(result) - 1
            cursor += 1
        else:
            result.append(text + "\n")
            last_added = len(result) - 1
    result += old_lines[cursor:]
    return "".join(result)


def check(old: str, new: str, unified: str, numbered: str) -> None:
    assert patch(old, unified) == new
    old_lines, new_lines = split_lines(old), split_lines(new)
    for row in numbered.split("\n"):
        match = NUMBERED_ROW.match(row)
        if not match:
            continue
        sign, number, text = match[1], int(match[2]), match[3]
        lines = old_lines if sign == "-" else new_lines
        assert lines[number - 1].rstrip("\n") == text, row
    if unified:
        patch_set = PatchSet(unified)
        assert patch_set[0].added == sum(r.startswith("+ ") for r in numbered.split("\n"))


@settings(max_examples=300, deadline=None)
@given(old=LINES.map("".join), new=LINES.map("".join))
def test_a_whole_text_diff_turns_the_old_text_into_the_new(old: str, new: str) -> None:
    diff = diff_texts(old, new, "f.txt")
    check(old, new, diff.unified, diff.numbered)
    assert diff.is_empty == (old == new)


@st.composite
def text_and_replacements(draw: st.DrawFn) -> tuple[str, list[Replacement]]:
    text = draw(LINES.map("".join))
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))
    pairs = list(zip(cuts[::2], cuts[1::2], strict=False))
    replacements = [
        Replacement(start, end, draw(st.text(alphabet="ab\nz", max_size=6))) for start, end in pairs
    ]
    return text, replacements


@settings(max_examples=500, deadline=None)
@given(case=text_and_replacements())
def test_a_diff_of_replacements_turns_the_old_text_into_the_new(
    case: tuple[str, list[Replacement]],
) -> None:
    old, replacements = case
    new = apply_replacements(old, replacements)
    diff = diff_replacements(old, replacements, "f.txt")
    check(old, new, diff.unified, diff.numbered)
    assert diff.is_empty == (old == new)
    if not diff.is_empty:
        # the header's line is the diff's first changed row, and nothing changes before it
        first_row = next(r for r in diff.numbered.split("\n") if r[:1] in "+-" and "|" in r)
        assert diff.first_changed_line == int(first_row[1:].split("|")[0])
        before = diff.first_changed_line - 1
        assert split_lines(old)[:before] == split_lines(new)[:before]


def test_the_hunk_headers_are_those_of_diff_u() -> None:
    old = "".join(f"{n}\n" for n in range(1, 21))
    new = old.replace("10\n", "ten\n")
    ours = diff_texts(old, new, "f.txt").unified
    theirs = "".join(difflib.unified_diff(split_lines(old), split_lines(new), "a/f.txt", "b/f.txt"))
    assert ours == theirs


def test_a_new_file_diffs_from_dev_null() -> None:
    diff = diff_texts("", "x\n", "n.txt", created=True)
    assert diff.unified == "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+x\n"
    assert diff.numbered == "@@ -0,0 +1 @@\n+ 1 | x"


def test_a_missing_final_newline_is_marked_in_both_forms() -> None:
    diff = diff_texts("a\nb", "a\nc", "f.txt")
    assert diff.unified.endswith(
        "-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
    )
    assert diff.numbered.endswith(
        "- 2 | b\n\\ No newline at end of file\n+ 2 | c\n\\ No newline at end of file"
    )
