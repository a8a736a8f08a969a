"""Lines and columns as the tool speaks them and as a language server counts them.

The tool's boundary is 1-based lines and columns in characters (code points); the wire is
0-based lines and columns in the negotiated position encoding: UTF-16 code units by default,
UTF-8 bytes or UTF-32 code points when the server says so (SPEC §4, §6). Lines end at `\\n`,
`\\r\\n` or `\\r`, as LSP defines them — not at the other breaks `str.splitlines` knows.
"""

from __future__ import annotations

import functools
import re

UTF8 = "utf-8"
UTF16 = "utf-16"
UTF32 = "utf-32"
POSITION_ENCODINGS = (UTF16, UTF32, UTF8)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their breaks; a trailing break opens one last empty line."""
    return _LINE_BREAK.split(text)


@functools.lru_cache(maxsize=64)
def shared_lines(text: str) -> list[str]:
    """`split_lines(text)`, remembered: a warm call reads the same unchanged texts again and
    again (the disk cache hands back the same string, whose hash Python keeps). The list is
    shared: callers only read it."""
    return split_lines(text)


def line_starts(text: str) -> list[int]:
    """The offset (in characters) where each LSP line of `text` starts."""
    return [0, *(match.end() for match in _LINE_BREAK.finditer(text))]


def counted_lines(text: str) -> int:
    """How many lines a person counts in `text`: a final line break does not open a new one."""
    lines = shared_lines(text)
    if len(lines) > 1 and lines[-1] == "":
        return len(lines) - 1
    return len(lines) if text else 0


def _unit_length(character: str, encoding: str) -> int:
    """How many units of `encoding` one character takes on the wire."""
    if encoding == UTF32:
        return 1
    code = ord(character)
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 2 if code >= 0x10000 else 1


def to_wire_column(line: str, character_index: int, encoding: str) -> int:
    """The column a server expects for the character at `character_index` of `line`."""
    prefix = line[:character_index]
    if encoding == UTF32 or prefix.isascii():
        return len(prefix)
    return sum(_unit_length(character, encoding) for character in prefix)


def from_wire_column(line: str, units: int, encoding: str) -> int:
    """The character index of a server's column in `line`, clamped to the line's end."""
    if encoding == UTF32 or line.isascii():
        return max(0, min(units, len(line)))
    counted = 0
    for index, character in enumerate(line):
        if counted >= units:
            return index
        counted += _unit_length(character, encoding)
    return len(line)


def offset_of(text: str, starts: list[int], line: int, units: int, encoding: str) -> int:
    """The character offset in `text` of a wire position; past the end clamps to the end."""
    if line >= len(starts):
        return len(text)
    start = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    line_text = _LINE_BREAK.sub("", text[start:end])
    return start + from_wire_column(line_text, units, encoding)
