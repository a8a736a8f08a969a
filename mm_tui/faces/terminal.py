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
# A whole escape sequence (CSI, OSC ended by BEL or ST, two-character): a streamed piece that
# ends inside one keeps it for the next piece, so the whole sequence is removed, not its tail.
_WHOLE_SEQUENCE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\^_])")
_LONGEST_HELD = 256


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
        self._held = ""

    def stream(self, text: str) -> None:
        """A piece of the model's answer, written as it comes."""
        text = self._held + text
        self._held = ""
        start = text.rfind("\x1b")
        tail = text[start:] if start >= 0 else ""
        if tail and len(tail) < _LONGEST_HELD and not _WHOLE_SEQUENCE.match(tail):
            self._held, text = tail, text[:start]
        self._write_piece(literal(text))

    def _write_piece(self, text: str) -> None:
        if not text:
            return
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def line(self, text: str, style: Style | None = None, *, to_err: bool = False) -> None:
        """One line (or several, for a multi-line text), styled when colour is allowed."""
        stream = self.err if to_err else self.out
        if self._held:  # an escape sequence that never ended: what is left of it, literally
            self._write_piece(literal(self._held))
            self._held = ""
        if not self._at_line_start:
            self.out.write("\n")
            self.out.flush()
            self._at_line_start = True
        text = literal(text)
        if style is not None and self._colour[id(stream)]:
            text = f"{_SGR[style]}{text}{_RESET}"
        print(text, file=stream, flush=True)
