"""The diff of an edit, twice: a unified diff for the window, a numbered one for the model.

SPEC §4 asks for "the diff with line numbers" after an edit. The window gets a standard
unified diff (`--- a/…`, `+++ b/…`, hunks) that any diff colourer parses; the model gets the
same hunks with each line's number written beside it, so it can `read_file` around a change
without counting. Only `\n` ends a line, and the unified diff keeps each line as the file has
it (a CRLF line ends in `\r`, a lone `\r` stays where it is): ACP rebuilds the exact old and
new texts from it (acp/file_changes.py). The model's numbered lines drop a line's final `\r`. Only the neighbourhood of each replacement is compared with `difflib`, so
editing one function of a 20,000-line file costs a few small comparisons, not a whole-file diff.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from mm_tui.agent.tools.file_text import displayable

CONTEXT_LINES = 3
NO_NEWLINE_MARKER = "\\ No newline at end of file"
CR = "\r"


@dataclass(frozen=True)
class Replacement:
    """`old_text[start:end]` becomes `new`; offsets are in characters of the old text."""

    start: int
    end: int
    new: str


@dataclass(frozen=True)
class FileDiff:
    """A change to one file, ready to show; empty when nothing changes."""

    unified: str
    numbered: str
    added: int
    removed: int
    first_changed_line: int | None  # 1-based; the same in the old and the new file

    @property
    def is_empty(self) -> bool:
        return self.added == 0 and self.removed == 0


def split_lines(text: str) -> list[str]:
    """Lines with their `\\n` kept; only `\\n` ends a line (unlike `str.splitlines`)."""
    lines = text.split("\n")
    last = lines.pop()
    kept = [line + "\n" for line in lines]
    if last:
        kept.append(last)
    return kept


def diff_texts(old_text: str, new_text: str, path: str, *, created: bool = False) -> FileDiff:
    """The diff between two whole texts (write_file): the common head and tail are skipped."""
    old_lines = split_lines(old_text)
    new_lines = split_lines(new_text)
    head = 0
    limit = min(len(old_lines), len(new_lines))
    while head < limit and old_lines[head] == new_lines[head]:
        head += 1
    tail = 0
    while tail < limit - head and old_lines[-1 - tail] == new_lines[-1 - tail]:
        tail += 1
    head_chars = sum(len(line) for line in old_lines[:head])
    old_tail_chars = sum(len(line) for line in old_lines[len(old_lines) - tail :])
    new_tail_chars = sum(len(line) for line in new_lines[len(new_lines) - tail :])
    middle = new_text[head_chars : len(new_text) - new_tail_chars]
    change = Replacement(head_chars, len(old_text) - old_tail_chars, middle)
    return diff_replacements(old_text, [change], path, created=created)


def diff_replacements(
    old_text: str, replacements: list[Replacement], path: str, *, created: bool = False
) -> FileDiff:
    """The diff of applying `replacements` (sorted, not overlapping) to `old_text`."""
    builder = _DiffBuilder(path, created)
    line_delta = 0
    line_cursor = (0, 1)  # (offset, 1-based line number at that offset) to count incrementally
    for window_start, window_end, inside in _windows(old_text, replacements):
        offset, number = line_cursor
        old_first = number + old_text.count("\n", offset, window_start)
        line_cursor = (window_start, old_first)
        old_window = old_text[window_start:window_end]
        new_window = apply_replacements(old_text, inside, window_start, window_end)
        old_lines = split_lines(old_window)
        new_lines = split_lines(new_window)
        builder.add_window(old_lines, new_lines, old_first, old_first + line_delta)
        line_delta += len(new_lines) - len(old_lines)
    return builder.result()


def apply_replacements(
    text: str, replacements: list[Replacement], start: int = 0, end: int | None = None
) -> str:
    """`text[start:end]` with the (sorted, disjoint) replacements inside it applied."""
    pieces: list[str] = []
    cursor = start
    for change in replacements:
        pieces.append(text[cursor : change.start])
        pieces.append(change.new)
        cursor = change.end
    pieces.append(text[cursor:end])
    return "".join(pieces)


def _next_line_end(text: str, position: int) -> int:
    newline = text.find("\n", position)
    return len(text) if newline < 0 else newline + 1


def _windows(
    text: str, replacements: list[Replacement]
) -> list[tuple[int, int, list[Replacement]]]:
    """Whole-line regions around the replacements, with context, merged when they touch."""
    merged: list[tuple[int, int, list[Replacement]]] = []
    for change in replacements:
        start = text.rfind("\n", 0, change.start) + 1
        end = change.end
        if not (end > start and text[end - 1] == "\n"):
            end = _next_line_end(text, end)
        # The region must end on a line boundary of the new text too (`a\n` -> `a` joins lines).
        new_region = text[start : change.start] + change.new + text[change.end : end]
        while end < len(text) and new_region and not new_region.endswith("\n"):
            following = _next_line_end(text, end)
            new_region += text[end:following]
            end = following
        for _ in range(CONTEXT_LINES):
            if start == 0:
                break
            start = text.rfind("\n", 0, start - 1) + 1
        for _ in range(CONTEXT_LINES):
            if end >= len(text):
                break
            end = _next_line_end(text, end)
        if merged and start <= merged[-1][1]:
            previous_start, previous_end, inside = merged[-1]
            merged[-1] = (previous_start, max(previous_end, end), [*inside, change])
        else:
            merged.append((start, end, [change]))
    return merged


class _DiffBuilder:
    """Collects hunks as (sign, line number, text) rows, then renders both forms."""

    def __init__(self, path: str, created: bool) -> None:
        self.path = path
        self.created = created
        self.hunks: list[tuple[str, list[tuple[str, int, str]]]] = []
        self.added = 0
        self.removed = 0
        self.first_changed_line: int | None = None

    def add_window(
        self, old_lines: list[str], new_lines: list[str], old_first: int, new_first: int
    ) -> None:
        matcher = difflib.SequenceMatcher(None, old_lines, new_lines)
        for group in matcher.get_grouped_opcodes(CONTEXT_LINES):
            rows: list[tuple[str, int, str]] = []
            for tag, i1, i2, j1, j2 in group:
                if tag != "equal" and self.first_changed_line is None:
                    self.first_changed_line = new_first + j1
                if tag == "equal":
                    rows += [(" ", new_first + j, new_lines[j]) for j in range(j1, j2)]
                if tag in ("replace", "delete"):
                    rows += [("-", old_first + i, old_lines[i]) for i in range(i1, i2)]
                    self.removed += i2 - i1
                if tag in ("replace", "insert"):
                    rows += [("+", new_first + j, new_lines[j]) for j in range(j1, j2)]
                    self.added += j2 - j1
            first, last = group[0], group[-1]
            old_range = _unified_range(old_first - 1 + first[1], old_first - 1 + last[2])
            new_range = _unified_range(new_first - 1 + first[3], new_first - 1 + last[4])
            self.hunks.append((f"@@ -{old_range} +{new_range} @@", rows))

    def result(self) -> FileDiff:
        if not self.hunks:
            return FileDiff("", "", 0, 0, None)
        width = len(str(max(number for _, rows in self.hunks for _, number, _ in rows)))
        old_name = "/dev/null" if self.created else _prefixed("a", self.path)
        unified = [f"--- {old_name}", f"+++ {_prefixed('b', self.path)}"]
        numbered: list[str] = []
        for header, rows in self.hunks:
            unified.append(header)
            numbered.append(header)
            for sign, number, line in rows:
                body = line.removesuffix("\n")
                unified.append(f"{sign}{displayable(body)}")
                numbered.append(f"{sign} {number:>{width}} | {displayable(body.removesuffix(CR))}")
                if not line.endswith("\n"):
                    unified.append(NO_NEWLINE_MARKER)
                    numbered.append(NO_NEWLINE_MARKER)
        return FileDiff(
            unified="\n".join(unified) + "\n",
            numbered="\n".join(numbered),
            added=self.added,
            removed=self.removed,
            first_changed_line=self.first_changed_line,
        )


def _unified_range(start: int, stop: int) -> str:
    """A hunk range as `diff -u` writes it (0-based half-open in, 1-based out)."""
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start if length == 0 else start + 1},{length}"


def _prefixed(prefix: str, path: str) -> str:
    return path if path.startswith("/") else f"{prefix}/{path}"


def find_all(text: str, needle: str, cap: int) -> list[int]:
    """Start offsets of `needle`, overlapping ones included, at most `cap` of them."""
    positions: list[int] = []
    position = text.find(needle)
    while position >= 0 and len(positions) < cap:
        positions.append(position)
        position = text.find(needle, position + 1)
    return positions
