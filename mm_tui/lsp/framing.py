"""LSP's base protocol on bytes: JSON messages in `Content-Length` frames, both ways.

Kept as plain JSON on the way in: each action reads what it needs, leniently, so an odd
answer becomes a failure line instead of a silent hang (python-lsp-server's `initialize`
answer does not decode into lsprotocol 2025's classes). Junk on a server's stdout — a header
without a length, a body that is not JSON — is skipped, and the next frame is read.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from typing import Any

log = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
_LENGTH_FIELD = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
#: Bytes kept while no header end shows up: junk longer than this is dropped.
_JUNK_LIMIT = 1 << 20


def frame(message: dict[str, Any]) -> bytes:
    """One message as the bytes of its frame (ASCII JSON: non-ASCII text stays escaped)."""
    body = _encoder().encode(message).encode()
    return b"Content-Length: %d\r\n\r\n%b" % (len(body), body)


class FrameReader:
    """Bytes in as they come, whole messages out in order."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._body_at = -1  # where the body of the frame being read starts, once known
        self._length = 0

    def feed(self, data: bytes) -> None:
        self._buffer += data

    def next_message(self) -> dict[str, Any] | None:
        """The next whole message read, or None until more bytes come."""
        buffer = self._buffer
        while buffer:
            if self._body_at < 0 and not self._read_header():
                return None
            end = self._body_at + self._length
            if len(buffer) < end:
                return None
            body = bytes(buffer[self._body_at : end])
            del buffer[:end]
            self._body_at = -1
            try:
                message = _DECODER.decode(body.decode("utf-8", "replace"))
            except ValueError:
                log.debug("a frame that is not JSON was skipped: %r", body[:200])
                continue
            if isinstance(message, dict):
                return message
            log.debug("a frame that is not a JSON object was skipped: %r", body[:200])
        return None

    @property
    def holds_message(self) -> bool:
        """Whether a whole frame waits in the buffer (cheap: no decoding)."""
        if not self._buffer:
            return False
        if self._body_at < 0 and not self._read_header():
            return False
        return len(self._buffer) >= self._body_at + self._length

    def _read_header(self) -> bool:
        """Find the next frame's header; False until its end has come. A header without a
        length is junk: dropped, and the search goes on after it."""
        buffer = self._buffer
        while True:
            end = buffer.find(_HEADER_END)
            if end < 0:
                if len(buffer) > _JUNK_LIMIT:
                    log.debug("%d bytes without a header were dropped", len(buffer))
                    del buffer[:-4]
                return False
            length = _content_length(bytes(buffer[:end]))
            if length is not None:
                self._body_at, self._length = end + 4, length
                return True
            log.debug("a header without a length was skipped: %r", bytes(buffer[:end])[:200])
            del buffer[: end + 4]


def _content_length(header: bytes) -> int | None:
    """The header's length field, found even after junk on its line."""
    found = _LENGTH_FIELD.search(header)
    return int(found.group(1)) if found else None


_DECODER = json.JSONDecoder()


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
