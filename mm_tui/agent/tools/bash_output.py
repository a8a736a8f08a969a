"""Reading a bash call's merged output pipe: bounded in memory, decoded as it comes, and
handed to the window in small batches while the command runs."""

from __future__ import annotations

import codecs
import os
import re
import selectors
import time

from mm_tui.agent.tools.base import ToolContext

TRUNCATED_LINE = "[output truncated: {count} characters not shown]"
READ_CHUNK_BYTES = 65_536
EMIT_EVERY_SECONDS = 0.1  # live output goes to the window at most this often
EMIT_PENDING_LIMIT = 16_384  # a flood sends only its latest characters to the live row
_ANSI_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
)
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_output(text: str) -> str:
    """Text a terminal would have interpreted, made plain: colours off, CRLF to LF."""
    text = _ANSI_SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL_CHARACTER.sub("\ufffd", text)


class HeadTailBuffer:
    """Keeps the first and last `limit / 2` characters of a stream and counts the rest.

    The head says what the command did, the tail how it ended (a failing test, a compiler
    error): both matter more than the middle of a long log.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.head_limit = self.limit - self.limit // 2
        self.tail_limit = self.limit // 2
        self.head = ""
        self.tail = ""
        self.total = 0

    def append(self, text: str) -> None:
        self.total += len(text)
        if len(self.head) < self.head_limit:
            room = self.head_limit - len(self.head)
            self.head += text[:room]
            text = text[room:]
        if text and self.tail_limit:
            self.tail = (self.tail + text)[-self.tail_limit :]

    def text(self) -> str:
        left_out = self.total - len(self.head) - len(self.tail)
        if left_out <= 0:
            return self.head + self.tail
        marker = TRUNCATED_LINE.format(count=left_out)
        before = "" if self.head.endswith("\n") else "\n"
        return f"{self.head}{before}{marker}\n{self.tail}"


class PipeReader:
    """Reads the merged output pipe without blocking past a given wait, decoding as it goes."""

    def __init__(self, descriptor: int, ctx: ToolContext) -> None:
        self.descriptor = descriptor
        self.ctx = ctx
        self.selector = selectors.DefaultSelector()
        self.selector.register(descriptor, selectors.EVENT_READ)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.buffer = HeadTailBuffer(ctx.max_output)
        self.bytes_read = 0
        self.waited_open = 0.0  # seconds spent in select while the pipe stayed open
        self.closed = False
        self.pending = ""
        self.last_emit = 0.0

    def read_for(self, seconds: float) -> None:
        """Wait up to `seconds` for output and take what is there."""
        if self.closed:
            return
        started = time.monotonic()
        ready = self.selector.select(seconds)
        chunk = os.read(self.descriptor, READ_CHUNK_BYTES) if ready else None
        if chunk == b"":
            self._take(self.decoder.decode(b"", final=True))
            self.close()
            return
        self.waited_open += time.monotonic() - started
        if chunk is None:
            self._emit(force=False)
            return
        self.bytes_read += len(chunk)
        self._take(self.decoder.decode(chunk))

    def close(self) -> None:
        """Stop reading: hand the window what is pending and release the selector."""
        self._emit(force=True)
        if not self.closed:
            self.closed = True
            self.selector.close()

    def drain(self, seconds: float) -> None:
        """After the group was ended: keep what it printed last, for at most `seconds`."""
        limit = time.monotonic() + seconds
        while not self.closed and time.monotonic() < limit:
            self.read_for(max(limit - time.monotonic(), 0.0))
        self._emit(force=True)

    def _take(self, text: str) -> None:
        if not text:
            return
        text = clean_output(text)
        self.buffer.append(text)
        self.ctx.keep_output(text)
        self.pending = (self.pending + text)[-EMIT_PENDING_LIMIT:]
        self._emit(force=False)

    def _emit(self, force: bool) -> None:
        now = time.monotonic()
        if self.pending and (force or now - self.last_emit >= EMIT_EVERY_SECONDS):
            self.ctx.emit_output(self.pending)
            self.pending = ""
            self.last_emit = now
