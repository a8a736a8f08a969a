"""Make text from the model, files, commands and servers safe to show literally.

Terminal escape sequences and control characters would be written raw to the terminal and
break the layout; they are removed, and so are the bidirectional embeddings, overrides and
isolates that reorder what is drawn (Trojan Source). A carriage return keeps what a terminal
would show (the text after the last one on its line), so progress bars do not pile up.

Lines the person reads about something outside (a notice, an error that quotes a path, a
name or a command) are one line and bounded: `quoted` for the value an error line names,
`one_line` for a whole notice or label, however huge or multi-line the text they got.

What a person approves is different: a command or a path in a permission question, or a
row's title, must hide nothing. `visible` escapes every character that could hide, reorder
or pad text (controls, CR, bidi overrides, zero-width and format characters, odd spaces,
long runs of spaces) instead of removing it.
"""

from __future__ import annotations

import io
import re
import unicodedata
from typing import TextIO, cast

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and two-character escapes.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, ended by BEL or ST
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
# C0 controls except tab and newline, DEL, C1 controls, and the bidi controls that reorder
# what follows them (embeddings, overrides, isolates).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: Characters of an outside value (path, name, command) that an error line quotes.
QUOTE_CHARS = 200
#: Characters of a notice or a label, however long the text it was given.
LINE_CHARS = 1000


def literal(text: str) -> str:
    """`text` without escape sequences, control or bidi characters; tabs and newlines kept."""
    if "\x1b" in text or "\x9b" in text:
        text = _ESCAPE_SEQUENCE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = "\n".join(_after_carriage_return(line) for line in text.split("\n"))
    return _CONTROL.sub("", text)


def _after_carriage_return(line: str) -> str:
    """What a terminal shows for a line rewritten with carriage returns."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part]
    return parts[-1] if parts else ""


class LiteralWriter(io.TextIOBase):
    """A text stream that writes only `literal` text: headless output to a terminal (stdout,
    stderr) can carry no escape sequence and no control character but newline and tab."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def writable(self) -> bool:
        return True

    def write(self, s: str, /) -> int:
        self.stream.write(literal(s))
        return len(s)

    def flush(self) -> None:
        self.stream.flush()


def literal_stream(stream: TextIO) -> TextIO:
    """`stream` behind a LiteralWriter, typed as the stream it stands for."""
    # a TextIOBase, not a typing.TextIO: it quacks as the stream it wraps
    return cast(TextIO, cast(object, LiteralWriter(stream)))


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text) - limit} more characters)"


def quoted(value: str, limit: int = QUOTE_CHARS) -> str:
    """An outside value as an error line names it: every hiding character escaped
    (`visible`), on one line, at most `limit` characters, the rest counted."""
    return _bounded(visible(value, keep_newlines=False), limit)


def one_line(text: str, limit: int = LINE_CHARS) -> str:
    """A notice or a label as the terminal shows it: `literal`, its lines joined by spaces,
    at most `limit` characters, the rest counted."""
    return _bounded(" ".join(literal(text).replace("\t", " ").split("\n")), limit)


def first_line(text: str) -> str:
    """The first line of `text`, marked with `…` when more lines follow (row titles)."""
    head, newline, rest = literal(text).partition("\n")
    return f"{head} …" if newline and rest.strip() else head


# What a person must see to know what runs: every character that is invisible, moves the
# cursor, reorders text (bidi), or pads a line is drawn as an escape instead:
# controls (CR, VT, FF, NEL…), format characters (zero-width, joiners, BOM, bidi, tags),
# separators and odd spaces, private-use and unassigned code points, and the characters that
# draw nothing though they are letters or marks (Unicode's Other_Default_Ignorable_Code_Point:
# the Hangul fillers; the variation selectors; the braille blank).
_SHOWN_CATEGORIES = {"Cc", "Cf", "Co", "Cn", "Cs", "Zl", "Zp", "Zs"}
_DRAW_NOTHING = re.compile(
    "[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0"
    "\ufff0-\ufff8\U000e0000-\U000e0fff]"
)
#: Spaces in a row up to this many are shown as they are; a longer run is counted instead.
SPACE_RUN = 8
_SPACE_RUN = re.compile(f" {{{SPACE_RUN + 1},}}")
_NAMED = {"\t": "\\t", "\r": "\\r", "\x1b": "\\e"}


def hides(char: str) -> bool:
    """Whether `char` could hide, move or reorder what a person reads (shown as an escape)."""
    return unicodedata.category(char) in _SHOWN_CATEGORIES or bool(_DRAW_NOTHING.match(char))


def visible_parts(text: str, *, keep_newlines: bool = True) -> list[tuple[str, bool]]:
    """`text` as (piece, is_escape) pairs: plain pieces as they are, every hiding character
    (controls, CR, bidi overrides, zero-width and format characters, fillers, odd spaces, a
    long run of spaces) as a visible escape such as `\\r`, `\\u202e` or `⟨40 spaces⟩`; a run
    of one hiding character is counted (`⟨2000 × \\u3164⟩`), so what follows stays in view.

    A front styles the escapes so they cannot be mistaken for typed text."""
    parts: list[tuple[str, bool]] = []
    plain: list[str] = []

    def flush() -> None:
        if plain:
            parts.append(("".join(plain), False))
            plain.clear()

    position = 0
    while position < len(text):
        char = text[position]
        if char == " ":
            run = _SPACE_RUN.match(text, position)
            if run:
                flush()
                parts.append((f"⟨{len(run.group())} spaces⟩", True))
                position = run.end()
                continue
            plain.append(char)
        elif char == "\n" and keep_newlines:
            plain.append(char)
        elif hides(char) or char == "\n":
            flush()
            end = position + 1
            while end < len(text) and text[end] == char:
                end += 1
            count = end - position
            if count > SPACE_RUN:
                parts.append((f"⟨{count} × {_escape(char)}⟩", True))
            else:
                parts.extend([(_escape(char), True)] * count)
            position = end
            continue
        else:
            plain.append(char)
        position += 1
    flush()
    return parts


def visible(text: str, *, keep_newlines: bool = True) -> str:
    """`visible_parts` joined: the text with every hiding character escaped."""
    return "".join(piece for piece, _ in visible_parts(text, keep_newlines=keep_newlines))


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if char == "\n":
        return "\\n"
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
