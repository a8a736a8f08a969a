"""Keys typed while the window starts are kept for it, as typed.

A terminal starts in canonical mode: the kernel echoes what is typed, edits the line (erase,
kill) and turns Enter into a line feed, which the window would read as Ctrl+J (a new line in the
prompt, not sending). Textual's driver takes the terminal ~0.5 s after `mm-tui` is run. So, as
soon as the command line says "the window", `keys_kept` sets the modes Textual's driver sets
(key by key, no echo, Enter kept; Ctrl+C still interrupts): later keys wait in the kernel's
buffer as they were typed. What the kernel had already cooked (typed during the interpreter's
start: whole lines, or a line still being edited) is read out at that moment and un-cooked
(`uncooked`), for the window to read before anything else. Bracketed paste is asked for at the
same moment, so a paste while the window starts is one paste, not lines each sent.
The terminal's modes are put back as they were afterwards, whatever happened.
"""

from __future__ import annotations

import fcntl
import logging
import os
import struct
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

log = logging.getLogger(__name__)

#: Never read more than this of what was typed before (a key held down, a huge paste).
TYPEAHEAD_LIMIT = 64 * 1024
BRACKETED_PASTE_ON = "\x1b[?2004h"
BRACKETED_PASTE_OFF = "\x1b[?2004l"

#: What Textual's LinuxDriver clears (textual/drivers/linux_driver.py, `_patch_iflag` and
#: `_patch_lflag`), ISIG kept: Ctrl+C interrupts a start that hangs.
RAW_IFLAG_OFF = termios.IXON | termios.IXOFF | termios.ICRNL | termios.INLCR | termios.IGNCR
RAW_LFLAG_OFF = termios.ECHO | termios.ICANON | termios.IEXTEN


def uncooked(data: bytes, modes: list[Any]) -> str:
    """What was typed, from bytes the line discipline received under `modes` (tcgetattr's
    list): ICRNL made Enter a line feed, INLCR the other way round; in canonical mode, Ctrl+D
    (VEOF) ended a line as a NUL byte. Without the conversion, a line feed is Ctrl+J again.

    A typed Ctrl+J, Ctrl+@ or VEOL character cannot be told from these (the kernel stored
    them alike) and reads as Enter or Ctrl+D: both far rarer while a program starts."""
    iflag, lflag, cc = modes[0], modes[3], modes[6]
    crnl, nlcr = bool(iflag & termios.ICRNL), bool(iflag & termios.INLCR)
    table = bytes.maketrans(
        b"\n\r\0",
        (b"\r" if crnl else b"\n")
        + (b"\n" if nlcr else b"\r")
        + (_eof_char(cc) if lflag & termios.ICANON else b"\0"),
    )
    return data.translate(table).decode("utf-8", "replace")


def _eof_char(cc: list[Any]) -> bytes:
    """The terminal's VEOF character (Ctrl+D unless `stty eof` changed it; NUL when off)."""
    eof = cc[termios.VEOF]
    return bytes([eof]) if isinstance(eof, int) else eof[:1] or b"\0"


def _pending(fd: int) -> int:
    """Bytes waiting in the terminal's input queue (FIONREAD; in canonical mode, whole lines)."""
    answer = fcntl.ioctl(fd, termios.FIONREAD, struct.pack("i", 0))
    return struct.unpack("i", answer)[0]


def _read_pending(fd: int) -> bytes:
    """Everything in the input queue now, without waiting (it is key by key: VMIN 1)."""
    read = b""
    while len(read) < TYPEAHEAD_LIMIT and (waiting := _pending(fd)) > 0:
        chunk = os.read(fd, min(waiting, TYPEAHEAD_LIMIT - len(read)))
        if not chunk:
            break
        read += chunk
    return read


@contextmanager
def keys_kept(stream: TextIO, screen: TextIO | None = None) -> Iterator[str]:
    """Inside, `stream` (a terminal) reads key by key and echoes nothing; after, it is as it
    was. Yields what had been typed before (`uncooked`), taken out of the terminal's queue for
    the window to read first. `screen` (a terminal: the window draws on it) is asked for
    bracketed paste meanwhile. Not a terminal (a pipe, a file): nothing changes, yields ""."""
    fd = -1
    before = None
    try:
        if stream.isatty():
            fd = stream.fileno()
            before = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        log.debug("no terminal to keep keys for", exc_info=True)
    if before is None:
        yield ""
        return
    kept = termios.tcgetattr(fd)
    kept[0] &= ~RAW_IFLAG_OFF
    kept[3] &= ~RAW_LFLAG_OFF
    kept[6][termios.VMIN] = 1
    kept[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, kept)
    pasting = screen is not None and _write(screen, BRACKETED_PASTE_ON)
    try:
        try:
            typed = uncooked(_read_pending(fd), before)
        except OSError:  # the terminal went away as the window started
            log.debug("could not read the keys typed before the window", exc_info=True)
            typed = ""
        yield typed
    finally:
        if pasting and screen is not None:
            _write(screen, BRACKETED_PASTE_OFF)
        try:
            termios.tcsetattr(fd, termios.TCSANOW, before)
        except termios.error:  # the terminal went away (the window was closed)
            log.debug("could not put the terminal's modes back", exc_info=True)


def _write(screen: TextIO, text: str) -> bool:
    """Whether `text` reached the terminal `screen` (never written to a file or a pipe)."""
    try:
        if not screen.isatty():
            return False
        screen.write(text)
        screen.flush()
    except (OSError, ValueError):
        log.debug("could not write to the terminal", exc_info=True)
        return False
    return True
