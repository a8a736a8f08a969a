"""Bytes on disk to text and back, without losing a byte a model never touched.

Files are read as UTF-8 with `surrogateescape`: an invalid byte (a Latin-1 comment in an old
file) survives an edit elsewhere in the file unchanged. Text shown to the model or the person
goes through `displayable`, since a lone surrogate cannot be sent as JSON.
"""

from __future__ import annotations

import re

_BINARY_SNIFF_BYTES = 8192
# Surrogates other than U+DC80..U+DCFF, the range `surrogateescape` uses for raw bytes.
_FOREIGN_SURROGATE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def decode_file_text(data: bytes) -> str:
    """The file's text; invalid UTF-8 bytes are kept as surrogates so they round-trip."""
    return data.decode("utf-8", errors="surrogateescape")


def encode_file_text(text: str) -> bytes:
    """The inverse of `decode_file_text`. A lone surrogate from a model's JSON (`"\\ud800"`),
    which no UTF-8 file can hold, is written as U+FFFD instead of failing the write."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return _FOREIGN_SURROGATE.sub("\ufffd", text).encode("utf-8", errors="surrogateescape")


def displayable(text: str) -> str:
    """`text` with kept invalid bytes shown as U+FFFD, safe to send as JSON or draw."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raw = encode_file_text(text)
        return raw.decode("utf-8", errors="replace")
    return text


def looks_binary(head: bytes) -> bool:
    """A NUL byte in the first 8 KiB marks a binary file, as git and grep decide it."""
    return b"\x00" in head[:_BINARY_SNIFF_BYTES]


def count_lines(text: str) -> int:
    """Lines in `text`: a last line without a final newline counts, an empty text has none."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def plural(count: int, word: str) -> str:
    """`1 edit`, `2 edits`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"
