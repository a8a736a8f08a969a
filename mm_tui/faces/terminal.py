"""Where the headless faces write for people: stdout and stderr, safely, coloured only on a TTY.

Every piece of text passes through `literal` (no escape sequence or control character from a
model, a file or a command reaches the terminal); colour is added afterwards, and only when
the stream is a terminal and NO_COLOR is not set (https://no-color.org).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from typing import Literal, TextIO

from mm_tui.support.terminal_text import literal

log = logging.getLogger(__name__)

Style = Literal["grey", "bold", "red", "yellow", "magenta"]
_SGR: dict[Style, str] = {
    "grey": "\x1b[90m",
    "bold": "\x1b[1m",
    "red": "\x1b[31m",
    "yellow": "\x1b[33m",
    "magenta": "\x1b[35m",
}
_RESET = "\x1b[0m"
# The start of an escape sequence not yet ended (CSI without its final byte, 7-bit or 8-bit;
# OSC without BEL or ST): what a streamed piece may end with, the rest coming in the next piece.
_OPEN_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?)?|\x9b[0-?]*[ -/]*")
_LONGEST_HELD = 256


class LiteralStream:
    """`literal` for text that arrives in pieces: a piece that ends inside an escape sequence
    keeps that tail until the next piece, so the whole sequence is removed, not only its ESC."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        text = self._held + text
        self._held = ""
        start = max(text.rfind("\x1b"), text.rfind("\x9b"))
        tail = text[start:] if start >= 0 else ""
        if tail and len(tail) < _LONGEST_HELD and _OPEN_SEQUENCE.fullmatch(tail):
            self._held, text = tail, text[:start]
        return literal(text)

    def flush(self) -> str:
        """What is held back (a sequence that never ended), made literal."""
        held, self._held = self._held, ""
        return literal(held)


def wants_colour(stream: TextIO, env: Mapping[str, str] | None = None) -> bool:
    """Colour on a terminal only; never with a non-empty NO_COLOR or TERM=dumb."""
    env = os.environ if env is None else env
    if env.get("NO_COLOR") or env.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stream without a terminal
        log.debug("cannot tell whether %r is a terminal", stream, exc_info=True)
        return False


class TerminalWriter:
    """Lines and streamed text on stdout, notices on stderr; a streamed answer that stopped
    mid-line is ended before the next line, so a row never glues onto a sentence."""

    def __init__(self, out: TextIO, err: TextIO, env: Mapping[str, str] | None = None) -> None:
        self.out, self.err = out, err
        self._colour = {id(out): wants_colour(out, env), id(err): wants_colour(err, env)}
        self._at_line_start = True
        self._answer = LiteralStream()

    def stream(self, text: str) -> None:
        """A piece of the model's answer, written as it comes."""
        self._write_piece(self._answer.feed(text))

    def _write_piece(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def line(self, text: str, style: Style | None = None, *, to_err: bool = False) -> None:
        """One line (or several, for a multi-line text), styled when colour is allowed."""
        stream = self.err if to_err else self.out
        self._write_piece(self._answer.flush())  # a sequence that never ended, literally
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
        text = literal(text)
        if style is not None and self._colour[id(stream)]:
            text = f"{_SGR[style]}{text}{_RESET}"
        print(text, file=stream, flush=True)
