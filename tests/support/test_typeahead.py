"""Keys typed while the window starts are kept (issue 16): on a real pseudo-terminal, the
kernel's line discipline is what keeps or changes them."""

from __future__ import annotations

import io
import os
import select
import termios
from collections.abc import Iterator
from contextlib import contextmanager

from mm_tui.support.typeahead import keys_kept


@contextmanager
def terminal() -> Iterator[tuple[int, io.TextIOWrapper]]:
    """A pseudo-terminal: the keyboard's end (master) and the program's stdin (slave)."""
    master, slave = os.openpty()
    cooked = termios.tcgetattr(slave)  # as a shell leaves it: lines, echo, Enter as a line feed
    cooked[0] |= termios.ICRNL
    cooked[3] |= termios.ICANON | termios.ECHO | termios.ISIG
    termios.tcsetattr(slave, termios.TCSANOW, cooked)
    stdin = open(slave, closefd=False)  # noqa: SIM115 - closed with the descriptors
    try:
        yield master, stdin
    finally:
        stdin.close()
        os.close(master)
        os.close(slave)


def read_as_the_window_does(fd: int, size: int) -> bytes:
    """What Textual's driver reads once it takes the terminal (raw, at once, TCSANOW): up to
    `size` bytes, as they come (the bound only stops a broken test)."""
    raw = termios.tcgetattr(fd)
    raw[0] &= ~termios.ICRNL
    raw[3] &= ~(termios.ICANON | termios.ECHO)
    termios.tcsetattr(fd, termios.TCSANOW, raw)
    read = b""
    while len(read) < size and select.select([fd], [], [], 5)[0]:
        read += os.read(fd, size - len(read))
    return read


def test_enter_typed_before_the_window_reads_the_terminal_still_sends() -> None:
    """Without it, a shell's terminal gives the window Enter as a line feed (Ctrl+J: a new line
    in the prompt, the message not sent), as tried in tmux."""
    with terminal() as (keyboard, stdin), keys_kept(stdin):
        os.write(keyboard, b"what does this do?\r")
        assert read_as_the_window_does(stdin.fileno(), 19) == b"what does this do?\r"


def test_the_terminal_modes_are_put_back_as_they_were() -> None:
    with terminal() as (_, stdin):
        fd = stdin.fileno()
        before = termios.tcgetattr(fd)
        with keys_kept(stdin):
            inside = termios.tcgetattr(fd)
            assert not inside[3] & (termios.ICANON | termios.ECHO)
            assert not inside[0] & termios.ICRNL
            assert inside[3] & termios.ISIG  # Ctrl+C still interrupts
        assert termios.tcgetattr(fd) == before
        try:
            with keys_kept(stdin):
                raise RuntimeError("a config error on the way")
        except RuntimeError:
            pass
        assert termios.tcgetattr(fd) == before


def test_a_stdin_that_is_not_a_terminal_is_left_alone() -> None:
    read, write = os.pipe()
    try:
        with open(read, closefd=False) as pipe, keys_kept(pipe):
            pass
        with keys_kept(io.StringIO("not a file")):
            pass
    finally:
        os.close(read)
        os.close(write)
