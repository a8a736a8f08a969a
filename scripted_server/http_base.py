"""The HTTP plumbing the scripted server shares with other test servers (tests/servers/zoo/):
a threading server on 127.0.0.1 that can cut its open connections when it stops, a quiet
handler that reads a request's path and JSON body, and the serving thread's start and stop.

Standard library only. Stopping joins every handler thread (`block_on_close`) after cutting
the connections they hold, so no test leaks a thread or a socket.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Request:
    """One request as a server handler read it."""

    #: The path without its query string.
    path: str
    #: The body as sent (its Content-Length bytes; empty for none).
    raw: bytes = b""
    #: The body's JSON value; None when there is no body or it is not JSON.
    body: Any = None
    #: A body was sent and it is not JSON.
    not_json: bool = False


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that logs nothing (tests read what the server recorded) and reads
    requests the same way in every server built on it."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silence: tests read captured requests, not a log on stderr."""

    def request_path(self) -> str:
        return self.path.split("?", 1)[0]

    def read_request(self) -> Request:
        """The path and the body, read whole by its Content-Length, parsed as JSON."""
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except json.JSONDecodeError:
            return Request(self.request_path(), raw, None, not_json=True)
        return Request(self.request_path(), raw, body)


class TrackedHTTPServer(ThreadingHTTPServer):
    """Keeps the sockets of open connections so that stopping can shut them."""

    daemon_threads = True
    block_on_close = True

    def __init__(self, port: int, handler: type[BaseHTTPRequestHandler]) -> None:
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", port), handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.open_connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.open_connections.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hangs up is ordinary; anything else is a bug worth a traceback."""
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)

    def cut_open_connections(self) -> None:
        with self.connections_lock:
            connections = list(self.open_connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def serve_in_thread(self, name: str) -> threading.Thread:
        """Serve in a daemon thread, started; its poll bounds how long `stop` waits."""
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.02}, name=name, daemon=True
        )
        thread.start()
        return thread

    def stop(self, thread: threading.Thread | None) -> None:
        """Stop serving, cut open connections, and join every thread the server started."""
        self.shutdown()
        self.cut_open_connections()
        self.server_close()  # joins the handler threads (block_on_close)
        if thread is not None:
            thread.join()
