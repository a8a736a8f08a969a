"""Keys typed while the window starts are kept as typed: on a real pseudo-terminal,
the kernel's line discipline is what keeps or changes them."""

from __future__ import annotations

import io
import os
import select
import termios
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from mm_tui.support.typeahead import (
    BRACKETED_PASTE_OFF,
    BRACKETED_PASTE_ON,
    keys_kept,
    uncooked,
)


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


def cooked_then_kept(keys: bytes) -> tuple[str, bytes]:
    """`keys` typed while the terminal is as a shell leaves it (the interpreter starting), then
    `keys_kept`: what it hands the window, and what is still in the terminal's queue."""
    with terminal() as (keyboard, stdin):
        os.write(keyboard, keys)
        # The kernel has taken them in once their echo is out (a read, not a wait).
        echoed = b""
        while len(echoed) < len(keys) and select.select([keyboard], [], [], 5)[0]:
            echoed += os.read(keyboard, 4096)
        with keys_kept(stdin) as typed:
            left = b""
            while select.select([stdin.fileno()], [], [], 0)[0]:
                left += os.read(stdin.fileno(), 4096)
        return typed, left


def test_enter_typed_before_the_window_reads_the_terminal_still_sends() -> None:
    """Without it, a shell's terminal gives the window Enter as a line feed (Ctrl+J: a new line
    in the prompt, the message not sent), as tried in tmux."""
    with terminal() as (keyboard, stdin), keys_kept(stdin):
        os.write(keyboard, b"what does this do?\r")
        assert read_as_the_window_does(stdin.fileno(), 19) == b"what does this do?\r"


def test_keys_the_kernel_cooked_before_are_handed_over_as_typed_and_taken_from_the_queue() -> None:
    """Typed during the interpreter's start: a whole line (its Enter made a line feed), then a
    line still being edited (the kernel held it back). Both come out as typed, Enter as Enter,
    once; the window reads nothing of them twice."""
    typed, left = cooked_then_kept("fix the tesst\x7f\x7ft\rand ünïcode ✓ \x1b[A".encode())
    assert typed == "fix the test\rand ünïcode ✓ \x1b[A"
    assert left == b""


def test_keys_typed_after_the_switch_stay_in_the_queue_for_the_window() -> None:
    with terminal() as (keyboard, stdin), keys_kept(stdin) as typed:
        os.write(keyboard, b"later\r")
        assert typed == ""
        assert read_as_the_window_does(stdin.fileno(), 6) == b"later\r"


@pytest.mark.parametrize(
    ("received", "typed"),
    [
        (b"fix it\n", "fix it\r"),  # ICRNL: Enter was made a line feed
        (b"one\ntwo\nthree", "one\rtwo\rthree"),
        (b"\x1b[A\x1b[B\n", "\x1b[A\x1b[B\r"),  # arrows untouched
        ("caf\u00e9 \u2713\n".encode(), "caf\u00e9 \u2713\r"),  # multi-byte UTF-8
        (b"ab\x00", "ab\x04"),  # Ctrl+D ended the line as a NUL
        (b"\r", "\r"),  # Ctrl+V Enter: the kernel kept it as it was
        (b"bad \xff byte", "bad \ufffd byte"),  # never an error for the window's reader
    ],
)
def test_the_bytes_of_a_cooked_terminal_read_as_what_was_typed(received: bytes, typed: str) -> None:
    with terminal() as (_, stdin):
        assert uncooked(received, termios.tcgetattr(stdin.fileno())) == typed


def test_without_icrnl_a_line_feed_stays_ctrl_j() -> None:
    with terminal() as (_, stdin):
        modes = termios.tcgetattr(stdin.fileno())
        modes[0] &= ~termios.ICRNL
        assert uncooked(b"a\nb\r", modes) == "a\nb\r"
        modes[3] &= ~termios.ICANON
        assert uncooked(b"\x00", modes) == "\x00"


def written(screen_end: int) -> bytes:
    """What reached a terminal's screen so far (the bound only stops a broken test)."""
    out = b""
    while select.select([screen_end], [], [], 0.5 if not out else 0)[0]:
        out += os.read(screen_end, 4096)
    return out


def test_bracketed_paste_is_asked_for_while_the_window_starts_and_turned_off_after() -> None:
    """So a paste before Textual's driver asks for it comes as one paste, not lines each sent."""
    master, slave = os.openpty()
    try:
        with terminal() as (_, stdin), open(slave, "w", closefd=False) as screen:
            with keys_kept(stdin, screen):
                assert written(master) == BRACKETED_PASTE_ON.encode()
            assert written(master) == BRACKETED_PASTE_OFF.encode()
            shown = io.StringIO()
            with keys_kept(stdin, shown):
                pass
            assert shown.getvalue() == ""  # a file or a pipe gets no escape
    finally:
        os.close(master)
        os.close(slave)


def test_the_terminal_modes_are_put_back_as_they_were() -> None:
    with terminal() as (_, stdin):
        fd = stdin.fileno()
        before = termios.tcgetattr(fd)
        with keys_kept(stdin):
            inside = termios.tcgetattr(fd)
            assert not inside[3] & (termios.ICANON | termios.ECHO)
            assert not inside[0] & (termios.ICRNL | termios.IXON)  # Ctrl+Q/Ctrl+S are keys
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
        with open(read, closefd=False) as pipe, keys_kept(pipe) as typed:
            assert typed == ""
        with keys_kept(io.StringIO("not a file")) as typed:
            assert typed == ""
    finally:
        os.close(read)
        os.close(write)
