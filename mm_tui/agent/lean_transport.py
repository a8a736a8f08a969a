"""The wire under the `openai` client for plain-HTTP servers: the standard library's
`http.client` in place of httpx's own connection pool (issue 16).

A local model streams one SSE event per token; httpx's pool (httpcore, h11) spends more CPU
per event than the whole of a bare `http.client` read, CPU the model on the same machine
needs. This transport sends the request the `openai` client built (its URL, headers and body,
untouched) and hands the body back as it arrives; the client still makes the request and
reads the answer, so every status and fault reaches the core as the same `openai` and httpx
exception as before (`ModelClient.describe`). Each failure is raised as the httpx exception
httpcore raises for it. `https` URLs and proxies keep httpx's own transport (TLS and proxy
settings stay exactly as the `openai` client makes them).

A connection is opened per request and closed with its response: a model call lasts seconds,
a local connect costs microseconds. `abort` shuts the socket of a request down from another
thread, so an interrupt ends a request still waiting for its first byte.
"""

from __future__ import annotations

import http.client
import logging
import socket
import threading
from collections.abc import Callable, Iterator

import httpx2

log = logging.getLogger(__name__)

#: httpcore's words for these faults, kept so the lines the person reads do not change.
NO_RESPONSE = "Server disconnected without sending a response."
CUT_BODY = "peer closed connection without sending complete message body: incomplete chunked read"
READ_SIZE = 65536


class LeanTransport(httpx2.BaseTransport):
    """Plain HTTP/1.1 over `http.client`, one connection per request; https to httpx."""

    def __init__(self) -> None:
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
        body = _Body(connection, response, lambda: self._forget(owner, sock, connection))
        headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in response.getheaders()]
        return httpx2.Response(
            response.status,
            headers=headers,
            stream=body,
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": response.reason.encode()},
        )

    def abort(self, thread_id: int) -> None:
        """End the request `thread_id` has in flight, wherever it waits (thread-safe)."""
        with self._lock:
            sock = self._live.get(thread_id)
        if sock is not None:
            _shut(sock)

    def _forget(
        self, owner: int, sock: socket.socket, connection: http.client.HTTPConnection
    ) -> None:
        with self._lock:
            if self._live.get(owner) is sock:
                del self._live[owner]
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
    """The response body as it arrives (chunked encoding undone by `http.client`).

    The connection is released by the thread reading it: another thread's `close` only shuts
    the socket down (closing a descriptor under a blocked read could hand the reader a reused
    one)."""

    def __init__(
        self,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        release: Callable[[], None],
    ) -> None:
        self._connection = connection
        self._response = response
        self._release = release
        self._reading = False

    def __iter__(self) -> Iterator[bytes]:
        read = self._response.read1
        failure: httpx2.HTTPError
        self._reading = True
        try:
            while data := read(READ_SIZE):
                yield data
            return
        except TimeoutError as exc:
            raise httpx2.ReadTimeout(str(exc)) from exc
        except http.client.IncompleteRead:
            failure = httpx2.RemoteProtocolError(CUT_BODY)
        except http.client.HTTPException as exc:
            raise httpx2.RemoteProtocolError(str(exc)) from exc
        except (OSError, ValueError) as exc:  # ValueError: the socket was closed under us
            raise httpx2.ReadError(str(exc)) from exc
        finally:
            self._reading = False
            self._release()
        raise failure

    def close(self) -> None:
        """Safe from another thread: shutting the socket down wakes a read blocked on it."""
        if self._reading:
            sock = self._connection.sock
            if sock is not None:
                _shut(sock)
            return
        self._release()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already shut, or never connected
        log.debug("shutting a model connection down failed", exc_info=True)
