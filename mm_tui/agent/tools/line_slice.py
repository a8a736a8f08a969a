"""Reading lines `start..end` of a file of any size without reading more than needed.

The file is read in 1 MiB blocks; newlines are counted with `bytes.count` (C speed), so
reaching line 900,000 of a 50 MB log costs about one plain read, and lines 1-20 cost almost
nothing. Collection stops at a byte budget (the tool can only show `maxOutput` characters);
past it only newlines are counted, to say how many lines were left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import BinaryIO

BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class LineSlice:
    """Whole lines of the file from `first_line` on, as bytes on disk.

    `data` holds every requested line when `complete`, else a prefix of them at least
    `byte_budget` long. `last_line` is the last requested line that exists (the requested
    end, clamped to the file). `reaches_end`: nothing in the file follows `last_line`.
    """

    data: bytes
    first_line: int
    last_line: int
    complete: bool
    reaches_end: bool


@dataclass(frozen=True)
class PastEnd:
    """The requested first line does not exist; the file has `total_lines` lines."""

    total_lines: int


def read_line_slice(
    source: BinaryIO, start: int, end: int, byte_budget: int, block_bytes: int = BLOCK_BYTES
) -> LineSlice | PastEnd:
    """Lines `start..end` (1-based, inclusive; `end` 0 = to the end of the file)."""
    start = max(start, 1)
    skipped, block, ended_with_newline = _skip_lines(source, start - 1, block_bytes)
    if skipped < start - 1:
        return PastEnd(skipped + (0 if ended_with_newline else 1))
    if not block:
        block = source.read(block_bytes)
    if not block:
        return PastEnd(skipped)
    wanted = end - start + 1 if end > 0 else None
    parts: list[bytes] = []
    collected_bytes = 0
    newlines = 0  # newlines inside `parts`
    while block:
        if wanted is not None:
            count = block.count(b"\n")
            if newlines + count >= wanted:
                cut = _offset_after_newlines(block, wanted - newlines)
                parts.append(block[:cut])
                reaches_end = cut == len(block) and not source.read(1)
                return LineSlice(b"".join(parts), start, end, True, reaches_end)
            newlines += count
        else:
            newlines += block.count(b"\n")
        parts.append(block)
        collected_bytes += len(block)
        if collected_bytes >= byte_budget:
            break
        block = source.read(block_bytes)
    data = b"".join(parts)
    if not block:  # the end of the file came before the end of the request
        last = start - 1 + newlines + (0 if data.endswith(b"\n") else 1)
        return LineSlice(data, start, last, True, True)
    last, reaches_end = _count_remaining(source, start - 1 + newlines, data, end, block_bytes)
    return LineSlice(data, start, last, False, reaches_end)


def _skip_lines(source: BinaryIO, lines: int, block_bytes: int) -> tuple[int, bytes, bool]:
    """Skip `lines` lines; return how many were skipped, the rest of the current block, and
    whether the bytes read so far ended with a newline (to count a last partial line)."""
    skipped = 0
    ended_with_newline = True
    while skipped < lines:
        block = source.read(block_bytes)
        if not block:
            return skipped, b"", ended_with_newline
        count = block.count(b"\n")
        if skipped + count >= lines:
            cut = _offset_after_newlines(block, lines - skipped)
            return lines, block[cut:], True
        skipped += count
        ended_with_newline = block.endswith(b"\n")
    return skipped, b"", ended_with_newline


def _offset_after_newlines(block: bytes, newlines: int) -> int:
    """The offset just after the `newlines`-th newline of `block` (which has that many)."""
    position = -1
    for _ in range(newlines):
        position = block.find(b"\n", position + 1)
    return position + 1


def _count_remaining(
    source: BinaryIO, complete_lines: int, data: bytes, end: int, block_bytes: int
) -> tuple[int, bool]:
    """After the budget: count on to `end` (or the end of the file) without keeping bytes.

    `complete_lines` is the number of the last line whose newline has been read.
    Returns the last requested line that exists and whether the file ends right after it.
    """
    partial = not data.endswith(b"\n")
    while True:
        block = source.read(block_bytes)
        if not block:
            return complete_lines + (1 if partial else 0), True
        count = block.count(b"\n")
        if end > 0 and complete_lines + count >= end:
            cut = _offset_after_newlines(block, end - complete_lines)
            return end, cut == len(block) and not source.read(1)
        complete_lines += count
        partial = not block.endswith(b"\n")
