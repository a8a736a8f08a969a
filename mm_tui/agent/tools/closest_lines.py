"""Why an edit's `old` text was not found, said so that a small model can fix it in one go.

A small model's `old` usually misses by a little: indentation, tabs, trailing spaces, line
numbers copied from `read_file` output, or a word changed since it last read the file.
Answering only "not found" sends it into a loop of identical retries; answering with the
file's closest lines, numbered, lets it copy the exact text.
"""

from __future__ import annotations

import difflib
import re

from mm_tui.agent.tools.file_text import displayable

NOT_FOUND_WHITESPACE = (
    "old text not found in {path}, but lines {first}-{last} match it except for whitespace "
    "(indentation, tabs or trailing spaces); copy old exactly from them, without the numbers:"
)
NOT_FOUND_CLOSEST = (
    "old text not found in {path}. The closest lines in the file are below; copy old exactly "
    "from them, without the numbers, or read_file {path} again:"
)
NOT_FOUND_NOTHING_CLOSE = (
    "old text not found in {path}, and no line of the file resembles it; "
    "read_file {path} to see its current text"
)
LINE_NUMBERS_COPIED = (
    "old text not found in {path}: its lines start with line numbers copied from read_file "
    "or a diff; send old without them"
)
MAX_SHOWN_LINES = 30
MAX_CANDIDATES = 2
SIMILARITY_THRESHOLD = 0.6
NUMBER_WIDTH = 6  # the same `cat -n` layout as read_file's numbered output

# `     12<TAB>text` (read_file numbered) or `+  12 | text` (the numbered diff)
_LINE_NUMBER_PREFIX = re.compile(r"^(?:\s*\d+\t|[ +-] *\d+ \| )")


def explain_missing(text: str, old: str, shown_path: str) -> str:
    """The refusal for an `old` that does not occur in `text`, with the lines it most likely
    meant."""
    file_lines = text.split("\n")
    without_numbers = _strip_line_numbers(old)
    if without_numbers is not None:
        if without_numbers in text:
            return LINE_NUMBERS_COPIED.format(path=shown_path)
        old = without_numbers
    old_lines = _trimmed_lines(old)
    if not old_lines:
        return NOT_FOUND_NOTHING_CLOSE.format(path=shown_path)
    match = _whitespace_insensitive_match(file_lines, old_lines)
    if match is not None:
        first, last = match
        header = NOT_FOUND_WHITESPACE.format(path=shown_path, first=first + 1, last=last)
        return "\n".join([header, *_numbered(file_lines, first, last)])
    windows = _closest_windows(file_lines, old_lines)
    if not windows:
        return NOT_FOUND_NOTHING_CLOSE.format(path=shown_path)
    shown: list[str] = [NOT_FOUND_CLOSEST.format(path=shown_path)]
    for index, (first, last) in enumerate(windows):
        if index:
            shown.append("...")
        shown += _numbered(file_lines, first, last)
    return "\n".join(shown)


def _strip_line_numbers(old: str) -> str | None:
    """`old` without copied line-number prefixes, or None when its lines have none."""
    lines = old.split("\n")
    meaningful = [line for line in lines if line.strip()]
    if not meaningful or not all(_LINE_NUMBER_PREFIX.match(line) for line in meaningful):
        return None
    return "\n".join(_LINE_NUMBER_PREFIX.sub("", line, count=1) for line in lines)


def _normalised(line: str) -> str:
    return " ".join(line.split())


def _trimmed_lines(old: str) -> list[str]:
    """The lines of `old`, leading and trailing blank lines dropped."""
    lines = old.split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _whitespace_insensitive_match(
    file_lines: list[str], old_lines: list[str]
) -> tuple[int, int] | None:
    """The first run of file lines equal to `old_lines` once whitespace is normalised."""
    wanted = [_normalised(line) for line in old_lines]
    for start, line in enumerate(file_lines):
        if _normalised(line) != wanted[0]:
            continue
        window = file_lines[start : start + len(wanted)]
        if len(window) == len(wanted) and all(
            _normalised(have) == want for have, want in zip(window, wanted, strict=True)
        ):
            return start, start + len(wanted)
    return None


def _closest_windows(file_lines: list[str], old_lines: list[str]) -> list[tuple[int, int]]:
    """Up to two regions of the file most like `old`, found through its longest line."""
    anchor_index, anchor = max(
        enumerate(_normalised(line) for line in old_lines), key=lambda item: len(item[1])
    )
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(anchor)  # seq2 is the one difflib indexes: set it once
    scored: list[tuple[float, int]] = []
    for number, line in enumerate(file_lines):
        candidate = _normalised(line)
        if not candidate:
            continue
        matcher.set_seq1(candidate)
        if matcher.real_quick_ratio() < SIMILARITY_THRESHOLD:
            continue
        if matcher.quick_ratio() < SIMILARITY_THRESHOLD:
            continue
        ratio = matcher.ratio()
        if ratio >= SIMILARITY_THRESHOLD:
            scored.append((ratio, number))
    scored.sort(key=lambda item: (-item[0], item[1]))
    span = min(len(old_lines), MAX_SHOWN_LINES)
    windows: list[tuple[int, int]] = []
    for _, number in scored:
        first = max(number - anchor_index, 0)
        last = min(first + span, len(file_lines))
        if any(first < other_last and other_first < last for other_first, other_last in windows):
            continue
        windows.append((first, last))
        if len(windows) == MAX_CANDIDATES:
            break
    return sorted(windows)


def _numbered(file_lines: list[str], first: int, last: int) -> list[str]:
    """Lines `first..last-1` (0-based) in read_file's numbered layout."""
    last = min(last, first + MAX_SHOWN_LINES)
    return [
        f"{number + 1:>{NUMBER_WIDTH}}\t{displayable(file_lines[number].removesuffix(chr(13)))}"
        for number in range(first, last)
    ]
