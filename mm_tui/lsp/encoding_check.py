"""The position encoding a server really counts in, checked against its own answers.

A server announces its encoding (or none: UTF-16), and most count as they say. Some do not:
jedi-language-server announces UTF-16 and counts code points, so a rename past an emoji
lands one column off and writes broken code. Those known are listed by command and by
`serverInfo` name (some never send one); the others are verified on the first answer that
allows it: ranges said to cover a name on a line with non-ASCII text are read in each
encoding, and the one where they all cover the name wins (SPEC §6).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path

from mm_tui.lsp.text import POSITION_ENCODINGS, UTF16, UTF32, from_wire_column

log = logging.getLogger(__name__)

#: Servers that count columns in code points whatever they announce (SPEC §6).
CODE_POINT_SERVERS = frozenset({"pylsp", "pyls", "jedi-language-server"})

#: A range a server said covers a name: the line's text and the range's wire columns.
Span = tuple[str, int, int]


def announced_encoding(negotiated: object, server_name: str, command: str) -> str:
    """The encoding to start with: a listed server's truth, else what it negotiated."""
    if server_name in CODE_POINT_SERVERS or Path(command).name in CODE_POINT_SERVERS:
        return UTF32
    if isinstance(negotiated, str) and negotiated in POSITION_ENCODINGS:
        return negotiated
    return UTF16


def covered(span: Span, encoding: str) -> str:
    """The text a span covers when its columns are read in `encoding`."""
    line, start, end = span
    return line[from_wire_column(line, start, encoding) : from_wire_column(line, end, encoding)]


def verified_encoding(spans: Iterable[Span], name: str, current: str) -> str | None:
    """A better encoding than `current` when the spans cover `name` only in that one."""
    spans = list(spans)
    telling = [span for span in spans if not span[0].isascii()]
    if not name or not telling:
        return None  # ASCII lines read the same in every encoding: they tell nothing
    if any(covered(span, current) != name for span in spans if span[0].isascii()):
        return None  # ranges wrong where no encoding matters: not a counting difference
    if all(covered(span, current) == name for span in telling):
        return None
    for encoding in POSITION_ENCODINGS:
        if encoding != current and all(covered(span, encoding) == name for span in telling):
            return encoding
    return None
