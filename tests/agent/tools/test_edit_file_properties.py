"""Properties of edit_file over generated files and edit batches (hypothesis).

- text outside the edited spans is never changed;
- a refused batch leaves the file byte-identical, and so does a dry run;
- the tool agrees with a plain reference: every old once, no two spans touching each other.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.edit_file import EditFileTool

PROPERTY_SETTINGS = settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
# No "<" or ">" in filler, so a marker `<<n>>` occurs exactly once in a generated file.
FILLER = st.text(alphabet="ab \t\né", max_size=12)
ANY_TEXT = st.text(alphabet="ab<>\n é\t", max_size=10)
SMALL_TEXT = st.text(alphabet="ab\n ", max_size=14)
FILE_TEXT = st.text(alphabet="abcdefghijklmnopqrstuvwxyz\n ", max_size=60)


def run_edit(text: bytes, edits: list[dict[str, str]], dry_run: bool = False):
    """Run the tool on a real file in a fresh directory; return the result and the file after."""
    with tempfile.TemporaryDirectory() as folder:
        target = Path(folder) / "f.txt"
        target.write_bytes(text)
        before = os.stat(target)
        args = {"path": "f.txt", "edits": edits, "dry_run": dry_run}
        result = EditFileTool().run(args, ToolContext(cwd=Path(folder)))
        after = os.stat(target)
        untouched = (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
        return result, target.read_bytes(), untouched


@st.composite
def marked_file_and_edits(draw: st.DrawFn) -> tuple[list[str], list[tuple[str, str, str]]]:
    """Filler pieces around unique markers, and for each marker an edit whose `old` is the
    marker widened into its neighbouring filler (never into another edit's part)."""
    count = draw(st.integers(1, 5))
    fillers = [draw(FILLER) for _ in range(count + 1)]
    edits: list[tuple[str, str, str]] = []  # (left part, marker, right part) of each old
    left_room = [0] * (count + 1)  # filler characters already taken from each side
    for index in range(count):
        before, after = fillers[index], fillers[index + 1]
        take_left = draw(st.integers(0, len(before) - left_room[index]))
        take_right = draw(st.integers(0, len(after) // 2))
        left_room[index + 1] = take_right
        left = before[len(before) - take_left :] if take_left else ""
        edits.append((left, f"<<{index}>>", after[:take_right]))
    return fillers, edits


@PROPERTY_SETTINGS
@given(data=marked_file_and_edits(), news=st.lists(ANY_TEXT, min_size=5, max_size=5))
def test_text_outside_the_edited_spans_is_never_changed(
    data: tuple[list[str], list[tuple[str, str, str]]], news: list[str]
) -> None:
    fillers, parts = data
    text = fillers[0] + "".join(
        marker + fillers[index + 1] for index, (_, marker, _) in enumerate(parts)
    )
    edits = [
        {"old": left + marker + right, "new": news[index]}
        for index, (left, marker, right) in enumerate(parts)
    ]
    expected = text
    for edit in reversed(edits):  # markers are unique, so each replacement is exact
        start = expected.rindex(edit["old"])
        expected = expected[:start] + edit["new"] + expected[start + len(edit["old"]) :]
    result, after, _ = run_edit(text.encode(), edits)
    if expected == text:
        assert result.status is ToolStatus.DONE and after == text.encode()
        return
    assert result.status is ToolStatus.DONE, result.output
    assert after.decode() == expected


def reference(text: str, edits: list[dict[str, str]]) -> str | None:
    """The plain rule: each old exactly once (overlaps counted), spans pairwise disjoint."""
    spans = []
    for edit in edits:
        old = edit["old"]
        starts = [i for i in range(len(text)) if text.startswith(old, i)] if old else []
        if len(starts) != 1:
            return None
        spans.append((starts[0], starts[0] + len(old), edit["new"]))
    spans.sort()
    for (_, end, _), (start, _, _) in zip(spans, spans[1:], strict=False):
        if start < end:
            return None
    for start, end, new in reversed(spans):
        text = text[:start] + new + text[end:]
    return text


@st.composite
def file_and_any_edits(draw: st.DrawFn) -> tuple[str, list[dict[str, str]]]:
    """A small file and edits whose olds are mostly pieces of it: often unique, sometimes
    repeated, overlapping or absent."""
    text = draw(FILE_TEXT)
    edits = []
    for _ in range(draw(st.integers(1, 3))):
        if text and draw(st.integers(0, 3)):
            start = draw(st.integers(0, len(text) - 1))
            end = draw(st.integers(min(start + 3, len(text)), min(start + 10, len(text))))
            old = text[start:end]
        else:
            old = draw(SMALL_TEXT)
        edits.append({"old": old, "new": draw(SMALL_TEXT)})
    return text, edits


@PROPERTY_SETTINGS
@given(case=file_and_any_edits())
def test_the_tool_agrees_with_the_reference_and_a_refusal_writes_nothing(
    case: tuple[str, list[dict[str, str]]],
) -> None:
    text, edits = case
    expected = reference(text, edits)
    result, after, untouched = run_edit(text.encode(), edits)
    if expected is None:
        assert result.status is ToolStatus.FAILED, result.output
        assert result.output.startswith("nothing was written to f.txt: ")
        assert after == text.encode() and untouched
    elif expected == text:
        assert result.status is ToolStatus.DONE
        assert after == text.encode() and untouched
    else:
        assert result.status is ToolStatus.DONE, result.output
        assert after.decode() == expected


@PROPERTY_SETTINGS
@given(case=file_and_any_edits())
def test_a_dry_run_never_writes(case: tuple[str, list[dict[str, str]]]) -> None:
    text, edits = case
    result, after, untouched = run_edit(text.encode(), edits, dry_run=True)
    assert after == text.encode() and untouched
    if reference(text, edits) not in (None, text):
        assert result.output.startswith("dry run, nothing written: ")
