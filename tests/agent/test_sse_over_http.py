"""The model's event stream read over real HTTP through the `openai` client's transport: however
the server cuts its writes and ends its lines, the chunks handed over are the same, in order,
and a fault met inside a read comes after the chunks before it."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from mm_tui.agent.model_client import ModelClient, ModelFault, sse_chunks
from mm_tui.agent.turn_signals import CancelFlag

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "go"}]}
ONE = {"choices": [{"delta": {"content": "héllo ✓ 🙂"}}]}
TWO = {"choices": [{"delta": {"content": "wörld"}, "finish_reason": "stop"}]}


def sse_body(end: bytes) -> bytes:
    """Two events as servers write them: a keep-alive comment, `data:` with and without its
    space, one event split over two `data:` lines, then `[DONE]` and a line never read."""
    one = json.dumps(ONE, ensure_ascii=False).encode()
    two = json.dumps(TWO, ensure_ascii=False).encode()
    half = two.index(b", ") + 1  # between two values: the joining newline is whitespace
    return end.join(
        [
            b": ping",
            b"data: " + one,
            b"",
            b":",
            b"data:" + two[:half],
            b"data:" + two[half:],
            b"",
            b"data: [DONE]",
            b"",
            b'data: {"never": "read"}',
            b"",
            b"",
        ]
    )


class RawServer:
    """One plain-socket HTTP server: it answers each request with `head` then each of `writes`
    as its own HTTP chunk, sent apart, so the client's reads fall between them."""

    def __init__(
        self, head: bytes, writes: list[bytes], gap: float, first_gap: float = 0.0
    ) -> None:
        self.head, self.writes, self.gap, self.first_gap = head, writes, gap, first_gap
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.base_url = f"http://127.0.0.1:{self.listener.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        connection, _ = self.listener.accept()
        with connection:
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            request = b""
            while b"\r\n\r\n" not in request:
                request += connection.recv(65536)
            head, _, body = request.partition(b"\r\n\r\n")
            length = next(
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
            while len(body) < length:
                body += connection.recv(65536)
            try:
                connection.sendall(self.head)
                time.sleep(self.first_gap)
                for write in self.writes:
                    connection.sendall(f"{len(write):x}\r\n".encode() + write + b"\r\n")
                    time.sleep(self.gap)
                connection.sendall(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):  # the client left at [DONE]
                return

    def close(self) -> None:
        self.thread.join(30)
        self.listener.close()


def head(content_type: bytes, *extra: bytes) -> bytes:
    lines = [b"HTTP/1.1 200 OK", b"Content-Type: " + content_type, b"Transfer-Encoding: chunked"]
    return b"\r\n".join([*lines, *extra, b"", b""])


def read_over_http(server_head: bytes, writes: list[bytes], gap: float = 0.0) -> Iterator[Any]:
    """What `ModelClient.stream` hands over, then the fault line if one ended it."""
    server = RawServer(server_head, writes, gap)
    seen: list[Any] = []
    try:
        ModelClient(server.base_url, "x", timeout=10).stream(
            REQUEST, CancelFlag(), lambda chunks: bool(seen.extend(chunks))
        )
    except ModelFault as fault:
        seen.append(fault.message)
    finally:
        server.close()
    return iter(seen)


@pytest.mark.parametrize("end", [b"\n", b"\r\n"], ids=["LF", "CRLF"])
@pytest.mark.parametrize("content_type", [b"text/event-stream", b"application/octet-stream"])
def test_a_stream_written_a_byte_at_a_time_reads_as_written_whole(
    end: bytes, content_type: bytes
) -> None:
    """A byte a write: reads end inside `data:`, inside a CRLF, inside a UTF-8 character and
    inside the JSON, whatever the content type says."""
    body = sse_body(end)
    assert list(sse_chunks([body])) == [ONE, TWO]

    seen = read_over_http(head(content_type), [body[i : i + 1] for i in range(len(body))], 0.001)

    assert list(seen) == [ONE, TWO]


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        (b"gzip", gzip.compress),
        (b"deflate", zlib.compress),
        (b"deflate", lambda data: zlib.compress(data)[2:-4]),  # raw, as some servers send it
    ],
    ids=["gzip", "deflate", "raw deflate"],
)
def test_a_compressed_stream_is_decoded_before_it_is_read(
    coding: bytes, compress: Callable[[bytes], bytes]
) -> None:
    body = compress(sse_body(b"\n"))
    writes = [body[: len(body) // 2], body[len(body) // 2 :]]

    seen = read_over_http(head(b"text/event-stream", b"Content-Encoding: " + coding), writes)

    assert list(seen) == [ONE, TWO]


@pytest.mark.parametrize(
    "last",
    [b'data: {"error": {"message": "overloaded"}}\n\n', b'data: {"choices": [\n\n'],
    ids=["error event", "malformed chunk"],
)
def test_a_fault_met_inside_a_read_comes_after_the_chunks_before_it(last: bytes) -> None:
    events = b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in (ONE, TWO))

    seen = list(read_over_http(head(b"text/event-stream"), [events + last]))

    assert seen[:2] == [ONE, TWO]
    assert len(seen) == 3 and isinstance(seen[2], str)
    assert ("overloaded" in seen[2]) == (b"error" in last)
    assert ("malformed chunk" in seen[2]) == (b"error" not in last)
