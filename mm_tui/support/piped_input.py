"""What `-p` reads from standard input: `cat log | mm-tui -p "why did this fail"`.

As `llm` and Gemini CLI do, text piped in comes first and the prompt after it; `-p -` takes the
whole prompt from standard input. A terminal on standard input is never read (except for
`-p -`, ended with Ctrl+D). The input is read to its end, whatever time the program writing it
takes (`a | mm-tui -p … | mm-tui -p …` chains), and a person whose input never ends is told
once how to stop waiting.
"""

from __future__ import annotations

import logging
import os
import select
from dataclasses import dataclass
from typing import BinaryIO, TextIO

log = logging.getLogger(__name__)

#: More than any local model's context holds: past this, the input is refused, not cut.
STDIN_LIMIT = 4 * 1024 * 1024
#: Seconds without any byte or end of input before the person is told what is awaited.
WAIT_HINT_AFTER = 3.0
FROM_STDIN = "-"

WAITING_HINT = (
    "mm-tui: -p is waiting for standard input to end (it is not a terminal); "
    "pipe the text in, or run with < /dev/null"
)
TERMINAL_HINT = "mm-tui: type the prompt, then Ctrl+D on a line of its own"


class PipedInputError(Exception):
    """Standard input cannot be used: one line for the person."""


@dataclass(frozen=True)
class PipedPrompt:
    """The prompt to send, and how many bytes of the input were not UTF-8 (shown as �)."""

    text: str
    undecodable: int = 0


def prompt_with_stdin(prompt: str, stdin: BinaryIO | None, err: TextIO) -> PipedPrompt:
    """The turn's text for `-p PROMPT`: piped text first, then the prompt; `-p -`: stdin's."""
    whole = prompt == FROM_STDIN
    fd = _fileno(stdin)
    if fd is None:
        if whole:
            raise PipedInputError("-p - reads the prompt from standard input, which is closed")
        return PipedPrompt(prompt)
    if os.isatty(fd):
        if not whole:
            return PipedPrompt(prompt)
        print(TERMINAL_HINT, file=err, flush=True)
    data = _read_all(fd, err, hint=not os.isatty(fd))
    if b"\x00" in data:
        raise PipedInputError(
            "standard input holds binary data (a NUL byte): pipe text, or name the file "
            "in the prompt for the model to read"
        )
    text = data.decode("utf-8", errors="replace")
    undecodable = text.count("\ufffd") - data.decode("utf-8", errors="ignore").count("\ufffd")
    text = text.removeprefix("\ufeff").rstrip("\n")
    if whole:
        if not text.strip():
            raise PipedInputError("-p - found no prompt on standard input")
        return PipedPrompt(text, undecodable)
    if not text.strip():
        return PipedPrompt(prompt)
    return PipedPrompt(f"{text}\n\n{prompt}", undecodable)


def _fileno(stream: BinaryIO | None) -> int | None:
    if stream is None:
        return None
    try:
        fd = stream.fileno()
        os.fstat(fd)
    except (OSError, ValueError):
        log.debug("standard input has no usable descriptor", exc_info=True)
        return None
    return fd


def _read_all(fd: int, err: TextIO, *, hint: bool) -> bytes:
    """Every byte up to the end of input, at most STDIN_LIMIT; the hint once if it stalls."""
    pieces: list[bytes] = []
    size = 0
    hinted = not hint
    while True:
        if not hinted:
            ready, _, _ = select.select([fd], [], [], WAIT_HINT_AFTER)
            if not ready:
                print(WAITING_HINT, file=err, flush=True)
                hinted = True
                continue
        piece = os.read(fd, 65536)
        if not piece:
            return b"".join(pieces)
        hinted = True  # input flows: it will end when its writer is done
        size += len(piece)
        if size > STDIN_LIMIT:
            raise PipedInputError(
                f"standard input is larger than {STDIN_LIMIT // (1024 * 1024)} MiB: save it to "
                "a file and name the file in the prompt, for the model to read what it needs"
            )
        pieces.append(piece)
