"""Keys typed while the window starts are kept for it (issue 16).

A terminal starts in canonical mode: it echoes what is typed and turns Enter into a line
feed, which the window reads as Ctrl+J (a new line in the prompt, not sending), until Textual's
driver takes the terminal, ~0.5 s after `mm-tui` is run. As soon as the command line says "the
window", the terminal reads key by key without echo and keeps Enter as it is; the keys wait in
the kernel's buffer until Textual reads them. The terminal's modes are put back as they were
afterwards, whatever happened.
"""

from __future__ import annotations

import logging
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

log = logging.getLogger(__name__)


@contextmanager
def keys_kept(stream: TextIO) -> Iterator[None]:
    """Inside, `stream` (a terminal) reads key by key and echoes nothing; after, it is as it
    was. Not a terminal (a pipe, a file): nothing changes."""
    fd = -1
    before = None
    try:
        if stream.isatty():
            fd = stream.fileno()
            before = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        log.debug("no terminal to keep keys for", exc_info=True)
    if before is None:
        yield
        return
    kept = termios.tcgetattr(fd)
    kept[0] &= ~termios.ICRNL  # iflag: Enter stays Enter (a line feed is Ctrl+J, a new line)
    kept[3] &= ~(termios.ICANON | termios.ECHO)  # lflag: Ctrl+C still interrupts (ISIG)
    kept[6][termios.VMIN] = 1
    kept[6][termios.VTIME] = 0
    termios.tcsetattr(fd, termios.TCSANOW, kept)
    try:
        yield
    finally:
        try:
            termios.tcsetattr(fd, termios.TCSANOW, before)
        except termios.error:  # the terminal went away (the window was closed)
            log.debug("could not put the terminal's modes back", exc_info=True)
