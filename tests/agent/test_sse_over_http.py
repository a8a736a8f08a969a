"""The model's event stream read over real HTTP through the lean transport (issue 16): however
the server cuts its writes and ends its lines, the chunks handed over are the same, in order,
and a fault met inside a read comes after the chunks before it."""

from __future__ import annotations

import gzip
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from mm_tui.agent.model_client import ModelClient, ModelFault, sse_chunks
from mm_tui.agent.stream_signs import composes_a_call
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
    inside the JSON (an event stream is read paced, another type as it comes)."""
    body = sse_body(end)
    assert list(sse_chunks([body])) == [ONE, TWO]

    seen = read_over_http(head(content_type), [body[i : i + 1] for i in range(len(body))], 0.001)

    assert list(seen) == [ONE, TWO]


def test_a_compressed_stream_is_decoded_before_it_is_read() -> None:
    body = gzip.compress(sse_body(b"\n"))
    writes = [body[: len(body) // 2], body[len(body) // 2 :]]

    seen = read_over_http(head(b"text/event-stream", b"Content-Encoding: gzip"), writes)

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


def read_slowly(writes: list[bytes]) -> tuple[list[Any], float]:
    """The chunks a client reading every 5 s (a long pace) gets from `writes` sent 0.4 s apart,
    the first 0.3 s after the headers, and the seconds it took."""
    server = RawServer(head(b"text/event-stream"), writes, gap=0.4, first_gap=0.3)
    client = ModelClient(server.base_url, "x", timeout=30)
    client.read_pace = 5.0
    seen: list[Any] = []
    started = time.monotonic()
    try:
        client.stream(REQUEST, CancelFlag(), lambda chunks: bool(seen.extend(chunks)))
    finally:
        server.close()
    return seen, time.monotonic() - started


@pytest.mark.parametrize("finish", [b'"finish_reason": "stop"', b'"finish_reason":"tool_calls"'])
def test_once_the_model_says_it_finished_the_rest_is_read_without_a_pause(finish: bytes) -> None:
    """A client reading every 5 s (a long pace) still sees the end when it comes: after the
    block with a chunk's `finish_reason`, `[DONE]` is read as it arrives, not after the pause.
    The body starts 0.3 s after the headers, so that block comes after a wait that proved the
    stream faster than the pace (any block before it would be followed by the pause, rightly:
    the model had not finished)."""
    one = b"data: " + json.dumps(ONE).encode() + b"\n\n"
    two = b'data: {"choices": [{"delta": {"content": "w"}, ' + finish + b"}]}\n\n"
    writes = [one + two, b"data: [DONE]\n\n"]
    seen, took = read_slowly(writes)
    assert len(seen) == 2 and seen[0] == ONE
    assert took < 3.0  # [DONE] came at 0.7 s; a pause would end at 5.3 s


def test_once_the_model_composes_a_tool_call_the_stream_is_read_at_the_tool_call_pace() -> None:
    """A client reading every 5 s (the window reads every 0.5 s) reads a tool call's fragments
    at most `TOOL_CALL_PACE` apart once one came: the call's end starts its tool. A block that
    only names `tool_calls` empty (some servers do, with text) changes nothing."""
    text = b'data: {"choices": [{"delta": {"content": "w", "tool_calls": []}}]}\n\n'
    fragment = (
        b'data: {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", '
        b'"function": {"name": "bash", "arguments": "%s"}}]}}]}\n\n'
    )
    writes = [fragment % b"{", fragment % b'\\"a\\"', fragment % b"}", b"data: [DONE]\n\n"]
    assert not composes_a_call(text) and composes_a_call(fragment % b"{")
    seen, took = read_slowly(writes)
    assert [chunk["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"]
            for chunk in seen] == ["{", '"a"', "}"]  # fmt: skip
    assert took < 4.0  # [DONE] came at 1.5 s; a pause would end past 5 s
