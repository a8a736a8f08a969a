"""A server-sent-events body cut into its JSON chunks as its blocks arrive.

A local model sends one event per token, so this runs per token on the CPU the model needs:
each block is cut into lines in one call, and each event's JSON is decoded by msgspec from its
bytes in one C call. What msgspec refuses (invalid UTF-8, NaN, a lone surrogate, a number out
of range, another encoding than UTF-8) is read by the `json` module as before, so every body
gives the chunks and the errors it gave before. A block's chunks come as one list, so that
their work runs in one loop (`ModelClient.stream`). msgspec is imported with the model client
(`ModelClient.client`), not at start.
"""

from __future__ import annotations

import codecs
import json
import logging
from typing import Any

import msgspec

log = logging.getLogger(__name__)

DONE = b"[DONE]"
_LINE_ENDS = (b"\n", b"\r")
_DECODER = msgspec.json.Decoder()
#: How an event stream's first line starts: a field SSE knows, or a comment.
_FIELDS = (b"data", b":", b"event", b"id", b"retry")
_BOM = b"\xef\xbb\xbf"


class NotAnEventStream(Exception):
    """The body's first line is no event-stream line: an HTML page, a JSON document…"""

    def __init__(self, first_line: bytes) -> None:
        super().__init__("not an event stream")
        self.first_line = first_line


class EventStreamReader:
    """Feed it the body's blocks in order; it returns each event's JSON object (other values
    are skipped) and sets `done` at `[DONE]`, after which nothing more is read.

    Lines end at LF, CRLF or CR (a CRLF split between two blocks is one end); an event's
    `data:` lines are joined (SSE allows several); comments and other fields are skipped;
    `end` reads a last line and event the body left open. An event that does not decode ends
    the reading where it stands: `feed` returns the chunks before it and `failure` holds the
    error, for the caller to raise once it has taken them; so does a body whose first line is
    no event-stream line (`NotAnEventStream`). `events` counts the events read (`[DONE]` too).
    """

    def __init__(self, encoding: str = "utf-8") -> None:
        self.done = False
        self.failure: Exception | None = None
        self.events = 0
        self._checked = False  # the first line was seen to be an event stream's
        try:
            self._text_only = codecs.lookup(encoding).name != "utf-8"
        except LookupError:  # an unknown encoding fails where it did: decoding the first event
            self._text_only = True
        self._encoding = encoding
        self._data: list[bytes] = []  # the `data:` values of the event still open
        self._rest = b""  # a line still arriving
        self._after_cr = False  # the block before ended with CR: a LF now is its CRLF's

    def feed(self, block: bytes) -> list[dict[str, Any]]:
        """The chunks the events completed by `block` hold, in order (see `failure`)."""
        if self.done or self.failure is not None or not block:
            return []
        if self._after_cr and block[:1] == b"\n":
            block = block[1:]
        self._after_cr = block[-1:] == b"\r"
        if self._rest:
            block, self._rest = self._rest + block, b""
        if not self._checked and not self._first_line_fits(block):
            return []
        lines = block.splitlines()
        if lines and block[-1:] not in _LINE_ENDS:
            self._rest = lines.pop()
        data = self._data
        chunks: list[dict[str, Any]] = []
        for line in lines:
            if line:
                if line.startswith(b"data:"):
                    data.append(line[6:] if line[5:6] == b" " else line[5:])
                continue  # else a comment, or an `event:`/`id:` field
            if not data:
                continue  # a blank line with no event open
            payload = data[0] if len(data) == 1 else b"\n".join(data)
            data.clear()
            self.events += 1
            if payload.strip() == DONE:
                self.done = True
                break
            try:
                chunk = self._decode(payload)
            except Exception as exc:  # raised by the caller, after the chunks before it
                log.debug("an event of the stream does not decode", exc_info=True)
                self.failure = exc
                break
            if type(chunk) is dict:
                chunks.append(chunk)
        return chunks

    def end(self) -> list[dict[str, Any]]:
        """The body ended: its last line and event, if it left them open, are read."""
        return self.feed(b"\n\n")

    def _first_line_fits(self, block: bytes) -> bool:
        """Whether the body so far (`block`) may be an event stream: its first line starts as
        an SSE field or a comment does, or too little came to tell (then False, and the
        bytes are kept). A body that is none sets `failure`."""
        head = block.removeprefix(_BOM).lstrip(b"\r\n\t ")
        too_short = False
        for field in _FIELDS:
            if head.startswith(field):
                self._checked = True
                return True
            too_short = too_short or field.startswith(head)
        if too_short:
            self._rest = block
        else:
            self.failure = NotAnEventStream(head.split(b"\n", 1)[0][:80])
        return False

    def _decode(self, payload: bytes) -> Any:
        if not self._text_only:
            try:
                return _DECODER.decode(payload)
            except msgspec.DecodeError:  # read as before: the json module, bytes replaced
                pass
        return json.loads(payload.decode(self._encoding, "replace"))
