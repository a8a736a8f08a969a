"""LSP's base protocol on bytes: JSON messages in `Content-Length` frames, both ways.

Kept as plain JSON on the way in: each action reads what it needs, leniently, so an odd
answer becomes a failure line instead of a silent hang (python-lsp-server's `initialize`
answer does not decode into lsprotocol 2025's classes). Junk on a server's stdout — a header
without a length, a body that is not JSON — is skipped, and the next frame is read.

msgspec encodes and decodes a frame in one C call each (the json module's Python layers cost
a warm request several microseconds: bench/bench_lsp.py); the json module stays the fallback
for what msgspec refuses or writes differently: invalid UTF-8 and non-standard JSON read by
the server, non-ASCII text to escape, lsprotocol objects (msgspec would write their Python
field names, not the protocol's).
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

import msgspec

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
_LENGTH_FIELD = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_LENGTH_PREFIX = b"Content-Length: "
#: Bytes kept while no header end shows up: junk longer than this is dropped.
_JUNK_LIMIT = 1 << 20
#: A longer declared body is taken for a broken header (no answer is this big): skipped.
_MAX_BODY = 256 << 20
#: A whole header inside a body still coming: raw CR LF cannot stand in a JSON text's
#: strings and `Content-Length` cannot stand between its tokens, so the frame before it
#: declared more than it sent, and the next frame starts here.
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*\d+\r\n(?:[^\r\n]*\r\n)*?\r\n", re.I)
#: The types of `params` and `result` msgspec is given; another (an lsprotocol object) goes
#: through the json module, which asks lsprotocol's converter for its protocol form.
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})


def frame(message: dict[str, Any]) -> bytes:
    """One message as the bytes of its frame (ASCII JSON: non-ASCII text stays escaped).

    `params` and `result` are plain JSON values, or one lsprotocol object (not nested in a
    plain value: msgspec would write it with its Python field names)."""
    body = b""
    if type(message.get("params")) in _PLAIN and type(message.get("result")) in _PLAIN:
        try:
            body = _FAST_ENCODER.encode(message)
        except (TypeError, msgspec.EncodeError):  # a value msgspec cannot write
            body = b""
    if not body.isascii() or not body:  # msgspec writes UTF-8: the json module escapes it
        body = _encoder().encode(message).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class FrameReader:
    """Bytes in as they come, whole messages out in order."""

    def __init__(self) -> None:
        #: The bytes not read yet: looked at by the channel (an empty one holds no message),
        #: never written but by `feed`.
        self.buffer = bytearray()
        self._body_at = -1  # where the body of the frame being read starts, once known
        self._length = 0
        self._searched = 0  # how far a body still coming was searched for the next header

    def feed(self, data: bytes) -> None:
        self.buffer += data

    def next_message(self) -> dict[str, Any] | None:
        """The next whole message read, or None until more bytes come."""
        buffer = self.buffer
        while buffer:
            if self._body_at < 0:
                end = buffer.find(_HEADER_END)  # the usual header: `Content-Length: N` alone
                if end > 16 and buffer.startswith(_LENGTH_PREFIX) and buffer[16:end].isdigit():
                    self._body_at, self._length = end + 4, int(buffer[16:end])
                    self._searched = self._body_at
                    if self._length > _MAX_BODY:
                        self._skip_header()
                        continue
                elif not self._read_header():
                    return None
            end = self._body_at + self._length
            if len(buffer) < end and (end := self._next_header()) < 0:
                return None
            body = bytes(buffer[self._body_at : end])
            del buffer[:end]
            self._body_at = -1
            try:
                message = _FAST_DECODER.decode(body)
            except msgspec.DecodeError:  # invalid UTF-8, NaN, a lone surrogate…: as before
                try:
                    message = _DECODER.decode(body.decode("utf-8", "replace"))
                except ValueError:
                    log.debug("a frame that is not JSON was skipped: %r", body[:200])
                    continue
            if type(message) is dict:
                return message
            log.debug("a frame that is not a JSON object was skipped: %r", body[:200])
        return None

    def _read_header(self) -> bool:
        """Find the next frame's header; False until its end has come. A header without a
        length is junk: dropped, and the search goes on after it."""
        buffer = self.buffer
        while True:
            end = buffer.find(_HEADER_END)
            if end < 0:
                if len(buffer) > _JUNK_LIMIT:
                    log.debug("%d bytes without a header were dropped", len(buffer))
                    del buffer[:-4]
                return False
            length = _content_length(bytes(buffer[:end]))
            if length is not None and length <= _MAX_BODY:
                self._body_at, self._length = end + 4, length
                self._searched = self._body_at
                return True
            log.debug("a header without a length was skipped: %r", bytes(buffer[:end])[:200])
            del buffer[: end + 4]

    def _next_header(self) -> int:
        """Where the body still coming ends early: the start of a whole header that came
        inside it (a server declared more than it sent), else -1. Each byte is searched once
        (a header cut by a read is looked for again from a little before the cut)."""
        buffer = self.buffer
        start = max(self._body_at, self._searched - 256)
        self._searched = len(buffer)
        found = _NEXT_HEADER.search(buffer, start)
        if found is None:
            return -1
        log.debug("a frame shorter than its Content-Length: read to the next header")
        return found.start()

    def _skip_header(self) -> None:
        log.debug("a header declaring %d bytes was skipped", self._length)
        del self.buffer[: self._body_at]
        self._body_at = -1


def _content_length(header: bytes) -> int | None:
    """The header's length field, found even after junk on its line."""
    if header.startswith(_LENGTH_PREFIX) and header[16:].isdigit():  # the usual one header
        return int(header[16:])
    found = _LENGTH_FIELD.search(header)
    return int(found.group(1)) if found else None


_DECODER = json.JSONDecoder()
_FAST_DECODER = msgspec.json.Decoder()
_FAST_ENCODER = msgspec.json.Encoder()


@functools.cache
def _encoder() -> json.JSONEncoder:
    """One encoder for every frame (`json.dumps` with `default=` builds one per call)."""
    return json.JSONEncoder(default=_plain)


def _plain(value: Any) -> Any:
    """An lsprotocol object (initialize's params, a didOpen) as the JSON the server reads."""
    return _converter().unstructure(value)


@functools.cache
def _converter() -> Any:
    from lsprotocol import converters

    return converters.get_converter()
