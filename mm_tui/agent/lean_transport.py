"""The wire under the `openai` client for plain-HTTP servers: the standard library's
`http.client` in place of httpx's own connection pool (issue 16).

A local model streams one SSE event per token; httpx's pool (httpcore, h11) spends more CPU
per event than the whole of a bare `http.client` read, CPU the model on the same machine
needs. This transport sends the request the `openai` client built (its URL, headers and body,
untouched), lets `http.client` read the status and headers, then reads the body from the
socket itself, an event stream at most 20 times a second while it flows (`_Body`). The client
still makes the request and reads the answer, so every status and fault reaches the core as
the same `openai` and httpx exception as before (`ModelClient.describe`): each failure is
raised as the httpx exception httpcore raises for it, with its words. It is given only plain
http servers with no proxy in the environment (`model_client.lean_transport_fits`): https and
proxied servers keep the `openai` client's own httpx transport, TLS and proxy settings
untouched; a request that still comes here for https goes to a plain httpx transport.

A connection is opened per request and closed with its response: a model call lasts seconds,
a local connect costs microseconds. `abort` shuts the socket of a request down from another
thread, so an interrupt ends a request still waiting for its first byte.
"""

from __future__ import annotations

import http.client
import logging
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator

import httpx2

from mm_tui.agent.stream_signs import TOOL_CALL_PACE, composes_a_call, finishing

log = logging.getLogger(__name__)

#: httpcore's words for these faults, kept so the lines the person reads do not change.
NO_RESPONSE = "Server disconnected without sending a response."
CUT_BODY = "peer closed connection without sending complete message body: incomplete chunked read"
READ_SIZE = 65536
#: An event stream is read at most this often while it flows (seconds), unless the client
#: asks for another pace (`LeanTransport(pace=…)`: the window draws twice a second and reads
#: less often, `-p` and ACP show text as it is read).
PACE = 0.05
STILL_WAITED = 0.001  # a wait after a pause that blocked longer than this: nothing had come
#: The response extension holding the body (`LeanTransport.raw_blocks`).
LEAN_BODY = "mm_tui.lean_body"


class LeanTransport(httpx2.BaseTransport):
    """Plain HTTP/1.1 over `http.client`, one connection per request; https to httpx."""

    def __init__(self, pace: float = PACE) -> None:
        """`pace`: an event stream is read at most this often while it flows (seconds)."""
        self.pace = pace
        self._https: httpx2.HTTPTransport | None = None
        self._lock = threading.Lock()
        #: The socket of each thread's request in flight, for `abort`.
        self._live: dict[int, socket.socket] = {}

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.url.scheme != "http":
            if self._https is None:
                self._https = httpx2.HTTPTransport()
            return self._https.handle_request(request)
        timeouts: dict[str, float | None] = request.extensions.get("timeout", {})
        connection = _connect(request.url, timeouts.get("connect"))
        owner, sock = threading.get_ident(), connection.sock
        with self._lock:
            self._live[owner] = sock
        try:
            response = _exchange(connection, request, timeouts)
        except BaseException:
            self._forget(owner, sock, connection)
            raise
        release = lambda: self._forget(owner, sock, connection, response)  # noqa: E731
        body = _Body(connection, response, release, timeouts.get("read"), request, self.pace)
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.getheaders()]
        return httpx2.Response(
            response.status,
            headers=headers,
            stream=body,
            extensions={
                "http_version": b"HTTP/1.1",
                "reason_phrase": response.reason.encode(),
                LEAN_BODY: body,
            },
        )

    @staticmethod
    def raw_blocks(response: httpx2.Response) -> Iterator[bytes] | None:
        """The body of a response this transport made, block by block as the socket gives
        it, when there is nothing to decode (no Content-Encoding); None otherwise. httpx's
        `iter_bytes` would pass each block through five generators, a chunker and a decoder
        first: at a token a block, more CPU than the block's own work."""
        body = response.extensions.get(LEAN_BODY)
        coding = response.headers.get("content-encoding", "identity").strip().lower()
        if not isinstance(body, _Body) or coding not in ("", "identity"):
            return None
        return iter(body)

    def abort(self, thread_id: int) -> None:
        """End the request `thread_id` has in flight, wherever it waits (thread-safe)."""
        with self._lock:
            sock = self._live.get(thread_id)
        if sock is not None:
            _shut(sock)

    def _forget(
        self,
        owner: int,
        sock: socket.socket,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse | None = None,
    ) -> None:
        with self._lock:
            if self._live.get(owner) is sock:
                del self._live[owner]
        if response is not None:
            response.close()
        connection.close()

    def close(self) -> None:
        if self._https is not None:
            self._https.close()


def _connect(url: httpx2.URL, timeout: float | None) -> http.client.HTTPConnection:
    connection = http.client.HTTPConnection(url.host, url.port or 80, timeout=timeout)
    try:
        connection.connect()
    except TimeoutError as exc:
        raise httpx2.ConnectTimeout(str(exc)) from exc
    except OSError as exc:
        raise httpx2.ConnectError(str(exc)) from exc
    connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def _exchange(
    connection: http.client.HTTPConnection,
    request: httpx2.Request,
    timeouts: dict[str, float | None],
) -> http.client.HTTPResponse:
    """Send the request as the client built it; wait for the status line and headers."""
    connection.sock.settimeout(timeouts.get("write"))
    try:
        connection.putrequest(
            request.method, request.url.raw_path.decode("ascii"),
            skip_host=True, skip_accept_encoding=True,
        )  # fmt: skip
        for name, value in request.headers.raw:
            connection.putheader(name, value)
        connection.endheaders(request.read() or None)
    except TimeoutError as exc:
        raise httpx2.WriteTimeout(str(exc)) from exc
    except OSError as exc:
        raise httpx2.WriteError(str(exc)) from exc
    connection.sock.settimeout(timeouts.get("read"))
    failure: httpx2.HTTPError
    try:
        return connection.getresponse()
    except TimeoutError as exc:
        raise httpx2.ReadTimeout(str(exc)) from exc
    except http.client.RemoteDisconnected:
        failure = httpx2.RemoteProtocolError(NO_RESPONSE)  # raised below: httpcore's own line
    except http.client.HTTPException as exc:
        raise httpx2.RemoteProtocolError(str(exc)) from exc
    except OSError as exc:
        raise httpx2.ReadError(str(exc)) from exc
    raise failure


class _Body(httpx2.SyncByteStream):
    """The response body as it arrives, read from the socket directly once `http.client` has
    read the headers (`BodyFraming` undoes the chunked encoding).

    An event stream is read at most every `pace` while it flows: a model sends one event per
    token, and waking once per token costs more than the token's own work. After a read, the
    next waits out the rest of `pace`, then takes everything that came meanwhile in one go
    (one `recv`, no `poll` first: it is there); a stream slower than that (one event per wait)
    is read as it comes, with no pause. The first bytes are never held back, nor the last ones
    once the model said it finished (`stream_signs.FINISHING`).

    The connection is released by the thread reading it: another thread's `close` only shuts
    the socket down (closing a descriptor under a blocked read could hand the reader a reused
    one)."""

    def __init__(
        self,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        release: Callable[[], None],
        read_timeout: float | None,
        request: httpx2.Request,
        pace: float,
    ) -> None:
        self._connection = connection
        self._pace = pace
        self._response = response
        self._release = release
        self._timeout = read_timeout
        self._request = request  # on every fault raised, as httpx's `iter_raw` would set it
        self._reading = False
        content_type = response.getheader("content-type", "") or ""
        self._paced = content_type.startswith("text/event-stream")

    def __iter__(self) -> Iterator[bytes]:
        self._reading = True
        request = self._request
        failure: httpx2.HTTPError
        try:
            yield from self._read()
            return
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(str(exc), request=request) from exc
        except BodyCut as cut:
            failure = httpx2.RemoteProtocolError(str(cut), request=request)
        except ValueError as exc:  # a malformed chunk size
            raise httpx2.RemoteProtocolError(str(exc), request=request) from exc
        except OSError as exc:
            raise httpx2.ReadError(str(exc), request=request) from exc
        finally:
            self._reading = False
            self._release()
        raise failure  # outside the handler: httpcore's own line, as the root cause

    def _read(self) -> Iterator[bytes]:
        sock, response = self._connection.sock, self._response
        framing = BodyFraming(response.chunked, response.length)
        sock.settimeout(0.0)  # from here the socket is waited on with poll, read without blocking
        assert response.fp is not None
        data = response.fp.read1(READ_SIZE)  # what http.client read past the headers
        wait = _waiter(sock)
        timeout = self._timeout
        paced, pace, slow, last = self._paced, self._pace, True, 0.0
        while True:
            if data:
                if body := framing.feed(data):
                    yield body
                    if paced and finishing(body):
                        paced = False  # the end is near: read it as it comes
                    elif pace > TOOL_CALL_PACE and composes_a_call(body):
                        pace = TOOL_CALL_PACE  # its end starts a tool: read it sooner
                if framing.complete:
                    return
                ready = len(data) == READ_SIZE  # more is waiting (wire speed): no pause
                if (
                    paced
                    and not slow
                    and not ready
                    and (pause := last + pace - time.monotonic()) > 0
                ):
                    time.sleep(pause)
                    ready = True  # what came meanwhile is there: read it without a wait
                if ready:
                    try:
                        data = sock.recv(READ_SIZE)
                    except BlockingIOError:  # nothing came after all: wait for it below
                        pass
                    else:  # as a wait that did not block: the stream is not slow
                        last, slow = time.monotonic(), False
                        if not data:
                            framing.end()
                            return
                        continue
            before = time.monotonic()
            if not wait(timeout):
                raise TimeoutError("timed out")
            last = time.monotonic()
            # slow: bytes come less often than `pace`, so a pause would only add a wake-up: it
            # is set when the wait after a pause still blocked, cleared when one came sooner
            slow = last - before > (pace if slow else STILL_WAITED)
            try:
                data = sock.recv(READ_SIZE)
            except BlockingIOError:  # woken with nothing to read after all
                data = b""
                continue
            if not data:
                framing.end()
                return

    def close(self) -> None:
        """Safe from another thread: shutting the socket down wakes a read blocked on it."""
        if self._reading:
            sock = self._connection.sock
            if sock is not None:
                _shut(sock)
            return
        self._release()


class BodyCut(Exception):
    """The connection closed before the body's end."""


class BodyFraming:
    """Where a body ends, and its chunked transfer encoding undone (RFC 9112 §7.1), fed the
    bytes as they arrive. `length` None and not chunked: the body ends with the connection."""

    MAX_LINE = 65536

    def __init__(self, chunked: bool, length: int | None) -> None:
        self.chunked = chunked
        self.left = length  # bytes left: of the body (by length), or of the current chunk
        self.complete = not chunked and length == 0
        self._pending = b""
        self._crlf = False  # a chunk's data was read: its CRLF comes next
        if chunked:
            self.left = 0

    def feed(self, data: bytes) -> bytes:
        """The body's bytes in `data` (framing taken out)."""
        if not self.chunked:
            if self.left is None:
                return data
            data = data[: self.left]
            self.left -= len(data)
            self.complete = self.left == 0
            return data
        pending = self._pending + data if self._pending else data
        out: list[bytes] = []
        at = 0
        while not self.complete:
            if self.left:  # inside a chunk's data
                piece = pending[at : at + self.left]
                if not piece:
                    break
                out.append(piece)
                at += len(piece)
                self.left -= len(piece)
                if self.left == 0:  # the CRLF ending the data, taken at once when it is there
                    if pending[at : at + 2] == b"\r\n":
                        at += 2
                    else:
                        self._crlf = True
                continue
            end = pending.find(b"\n", at)
            if end < 0:
                if len(pending) - at > self.MAX_LINE:
                    raise ValueError("a chunk size line longer than 64 KB")
                break
            line, at = pending[at:end].strip(), end + 1
            if self._crlf:  # the empty line that ends a chunk's data
                self._crlf = False
                if line:
                    raise ValueError("chunk data longer than its size")
                continue
            size = int(line.split(b";", 1)[0], 16)  # chunk extensions are ignored
            if size < 0:
                raise ValueError(f"a negative chunk size: {line!r}")
            if size == 0:
                self.complete = True  # trailers, if any, are not read: the connection closes
            self.left = size
        self._pending = pending[at:]
        return out[0] if len(out) == 1 else b"".join(out)

    def end(self) -> None:
        """The connection closed: fine at the body's end or for a body without a length."""
        if self.chunked and not self.complete:
            raise BodyCut(CUT_BODY)
        if not self.chunked and self.left:
            raise BodyCut(
                "peer closed connection without sending complete message body: "
                f"{self.left} bytes missing"
            )


def _waiter(sock: socket.socket) -> Callable[[float | None], bool]:
    """Wait until `sock` can be read (or is closed) within a timeout; False when it ran out."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)

        def poll(timeout: float | None) -> bool:
            return bool(poller.poll(None if timeout is None else timeout * 1000))

        return poll

    def wait(timeout: float | None) -> bool:
        return bool(select.select([sock], [], [], timeout)[0])

    return wait


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already shut, or never connected
        log.debug("shutting a model connection down failed", exc_info=True)
