"""A real HTTP server on 127.0.0.1 that plays scripted replies through the chat-completions API.

Standard library only: a ThreadingHTTPServer in a daemon thread, HTTP/1.1 keep-alive, SSE bodies
sent chunked (what httpx reads best; a fault ends a body cleanly or cuts it). `stop()` wakes
every delay, shuts every open connection and joins every handler: no test leaks a thread.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable
from http import HTTPStatus
from typing import Any

from scripted_server.grammar import REFUSAL, GrammarMode, held_to, schema_of
from scripted_server.http_base import QuietHandler, TrackedHTTPServer
from scripted_server.script import DIALECTS, Reply, ScriptError
from scripted_server.side_routes import OLLAMA_VERSION, answer_get, answer_post
from scripted_server.wire import (
    DIALECT_TRAITS,
    ChunkBuilder,
    ReplyContext,
    default_usage,
    sse_event,
)

#: The reply given when the queue is empty.
SCRIPT_EXHAUSTED_TEXT = "[scripted server: script exhausted]"
DEFAULT_MODELS = ("scripted-model",)
#: The error event of Reply(fault="error_event"), shaped like OpenAI's and vLLM's.
ERROR_EVENT = {"error": {"message": "scripted mid-stream failure", "type": "server_error"}}
#: The line of Reply(fault="malformed_chunk").
MALFORMED_CHUNK = "{not json"
#: Writes are gathered up to this size when a reply has no delay (speed over realism).
FLUSH_BYTES = 16_384


class _ConnectionCut(Exception):
    """The client went away, or the server is stopping: abandon this response."""


class _HTTPServer(TrackedHTTPServer):
    """The scripted server's HTTP server: its handlers reach the `ScriptedServer`."""

    def __init__(self, owner: ScriptedServer, port: int) -> None:
        self.owner = owner
        super().__init__(port, _Handler)


class ScriptedServer:
    """An OpenAI-compatible model server that answers from a queue of `Reply`s. Use as a
    context manager (started on enter, stopped on exit), or call start()/stop()."""

    def __init__(self, dialect: str = "openai", port: int = 0) -> None:
        self._dialect = DIALECTS[0]
        self.dialect = dialect  # validated by the property; may be changed while serving
        self.port = port
        self.models: list[str] = list(DEFAULT_MODELS)
        #: Served on GET /props (llama-server) when set.
        self.n_ctx: int | None = None
        #: Served as `model_info.llama.context_length` on POST /api/show (Ollama) when set.
        self.ollama_ctx: int | None = None
        #: Served as `num_ctx` in the `parameters` of POST /api/show when set.
        self.ollama_num_ctx: int | None = None
        #: Served as the loaded model's `context_length` on GET /api/ps (Ollama) when set.
        self.ollama_loaded: int | None = None
        self.ollama_version = OLLAMA_VERSION  # GET /api/version (ollama dialect)
        #: What a grammar in a request does (grammar.py): honoured, ignored, or refused.
        self.grammar: GrammarMode = "honour"
        #: The JSON schema each chat request was constrained to (None: none honoured).
        self.grammars: list[dict[str, Any] | None] = []
        #: Every JSON body received on /chat/completions, in order.
        self.requests: list[dict[str, Any]] = []
        self.arrived_at: list[float] = []  # when each came (time.monotonic), and when its
        self.answered_at: list[float] = []  # reply was all sent: what a bench times from
        #: Every other request: (method, path, JSON body or None).
        self.other_requests: list[tuple[str, str, Any]] = []
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._captured = threading.Condition(self._lock)
        self._serial = 0
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def dialect(self) -> str:
        """The dialect of every reply that does not name its own; read at each request."""
        return self._dialect

    @dialect.setter
    def dialect(self, name: str) -> None:
        if name not in DIALECTS:
            raise ScriptError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
        self._dialect = name

    # -- life cycle ------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        """Bind 127.0.0.1 (port 0 = any free port) and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(self, self.port)
        self.port = self._httpd.server_address[1]
        self._thread = self._httpd.serve_in_thread(f"scripted-server:{self.port}")
        return self

    def stop(self) -> None:
        """Stop serving, cut open connections, and join every thread the server started."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.stop(thread)
        self._httpd = self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- what tests use --------------------------------------------------------------------

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def enqueue(self, *replies: Reply) -> None:
        """Add replies to the end of the script."""
        with self._lock:
            self._replies.extend(replies)

    def extend(self, replies: Iterable[Reply]) -> None:
        self.enqueue(*replies)

    @property
    def pending(self) -> int:
        """Replies not yet played."""
        with self._lock:
            return len(self._replies)

    def wait_for_requests(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Block until `count` chat requests were captured; TimeoutError if they never come."""
        with self._captured:
            arrived = self._captured.wait_for(lambda: len(self.requests) >= count, timeout)
            if not arrived:
                raise TimeoutError(
                    f"scripted server got {len(self.requests)} request(s), "
                    f"expected {count} within {timeout}s"
                )
            return list(self.requests)

    # -- used by the handler ---------------------------------------------------------------

    def _take_reply(self, body: dict[str, Any]) -> tuple[Reply, ReplyContext]:
        """Record a chat request and pick its reply and identifiers, atomically; a grammar
        refused answers 400 without playing a reply, one honoured must fit the reply."""
        schema = schema_of(body, self.dialect) if self.grammar != "ignore" else None
        with self._captured:
            self.requests.append(body)
            self.arrived_at.append(time.monotonic())
            self.grammars.append(schema if self.grammar == "honour" else None)
            self._captured.notify_all()
            if schema is not None and self.grammar == "refuse":
                reply = Reply(status=400, error_body=REFUSAL)
            else:
                reply = self._replies.popleft() if self._replies else Reply(SCRIPT_EXHAUSTED_TEXT)
            if schema is not None and self.grammar == "honour":
                reply = held_to(schema, reply)
            self._serial += 1
            serial = self._serial
            call_ids = []
            for number, call in enumerate(reply.tool_calls, start=1):
                call_ids.append(call.id if call.id is not None else f"call_{serial:03d}_{number}")
        model = body.get("model") if isinstance(body.get("model"), str) else None
        context = ReplyContext(
            completion_id=f"chatcmpl-scripted-{serial}",
            model=model or (self.models[0] if self.models else DEFAULT_MODELS[0]),
            request=body,
            call_ids=call_ids,
        )
        return reply, context

    def _record_other(self, method: str, path: str, body: Any) -> None:
        with self._lock:
            self.other_requests.append((method, path, body))


class _Handler(QuietHandler):
    """One connection: routes requests to the owner ScriptedServer."""

    protocol_version = "HTTP/1.1"
    server: _HTTPServer  # pyright: ignore[reportIncompatibleVariableOverride]  # narrowed to ours

    @property
    def owner(self) -> ScriptedServer:
        return self.server.owner

    # -- routing ---------------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.request_path().rstrip("/")
        self.owner._record_other("GET", path, None)
        answer = answer_get(self.owner, path)
        if answer is None:
            self.send_not_found(path)
        else:
            self.send_json(*answer)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        request = self.read_request()
        path, body = request.path.rstrip("/"), request.body
        if request.not_json:
            self.owner._record_other("POST", path, request.raw.decode("utf-8", "replace"))
            self.send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        if path.endswith("/chat/completions") and isinstance(body, dict):
            self.answer_chat(body)
            return
        self.owner._record_other("POST", path, body)
        answer = answer_post(self.owner, path, body)
        if answer is None:
            self.send_not_found(path)
        else:
            self.send_json(*answer)

    # -- plain responses -------------------------------------------------------------------

    def send_json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_not_found(self, path: str) -> None:
        self.send_json(404, {"error": {"message": f"no route for {path}", "type": "not_found"}})

    # -- chat completions ------------------------------------------------------------------

    def answer_chat(self, body: dict[str, Any]) -> None:
        owner = self.owner
        reply, context = owner._take_reply(body)
        try:
            if reply.stall and owner._stopping.wait(reply.stall):
                raise _ConnectionCut
            if reply.status is not None:
                self.send_error_status(reply)
                return
            builder = ChunkBuilder(DIALECT_TRAITS[reply.dialect or owner.dialect], context)
            usage = reply.usage if reply.usage is not None else default_usage(reply, body)
            if body.get("stream"):
                self.stream(reply, builder, usage)
            elif reply.fault in ("disconnect", "no_done"):
                raise _ConnectionCut
            else:
                self.send_json(200, builder.completion(reply, usage), reply.headers)
            owner.answered_at.append(time.monotonic())
        except (_ConnectionCut, BrokenPipeError, ConnectionResetError):
            self.cut()

    def send_error_status(self, reply: Reply) -> None:
        status = reply.status or 500
        body = reply.error_body
        if body is None:
            try:
                phrase = HTTPStatus(status).phrase
            except ValueError:
                phrase = f"HTTP {status}"
            body = {"error": {"message": phrase, "type": "scripted_error"}}
        self.send_json(status, body, reply.headers)

    def stream(self, reply: Reply, builder: ChunkBuilder, usage: dict[str, Any]) -> None:
        plan = builder.plan(reply, usage)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in (reply.headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        writer = _ChunkedWriter(self, reply.delay)
        writer.send_events(plan.head)
        fault = reply.fault
        if fault == "disconnect":
            writer.flush()
            raise _ConnectionCut
        if fault == "no_done":
            writer.finish()
            return
        if fault == "error_event":
            writer.send_events([ERROR_EVENT])
            writer.finish()
            return
        if fault is not None and fault.startswith(("malformed", "endless")):
            writer.send_events(builder.endless(fault) if fault[0] == "e" else [MALFORMED_CHUNK])
        writer.send_events(plan.tail)
        writer.send_events(plan.ending)
        writer.send_events(["[DONE]"])
        writer.finish()

    def cut(self) -> None:
        """End this connection without finishing the response (a crash, seen from the client)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


class _ChunkedWriter:
    """Writes SSE events as HTTP chunks, one per event when paced, gathered when not."""

    def __init__(self, handler: _Handler, delay: float) -> None:
        self.handler = handler
        self.delay = delay
        self.stopping = handler.owner._stopping
        self.buffer = bytearray()
        self.sent_any = False

    def send_events(self, events: Iterable[dict[str, Any] | str | float]) -> None:
        for event in events:
            if not isinstance(event, dict | str):  # a pause (Reply.pause): what came before first
                self.flush()
            wait = self.delay * self.sent_any if isinstance(event, dict | str) else event
            if wait and self.stopping.wait(wait) or self.stopping.is_set():
                raise _ConnectionCut
            if isinstance(event, dict | str):
                self.buffer += sse_event(event)
                self.sent_any = True
            if self.delay or len(self.buffer) >= FLUSH_BYTES:
                self.flush()

    def flush(self) -> None:
        if not self.buffer:
            return
        data = bytes(self.buffer)
        self.buffer.clear()
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.handler.wfile.flush()

    def finish(self) -> None:
        """Flush, then the zero-length chunk that ends the body cleanly."""
        self.flush()
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()
