"""The frame every emulator of the server zoo stands on: a real HTTP server on 127.0.0.1 whose
HTTP version, body framing, SSE bytes, routes and error bodies are the emulated server's own.

An emulator subclass says what differs (`protocol_version`, `framing`, `json_framing`,
`stream_events`, `get`, `post`, `refuse`); this module plays it over a socket. The script is
the scripted server's `Reply`/`ToolCall`: what the model "says" stays the same across the
zoo, what the server makes of it is the emulator's.

Framing, as a client sees it:
- "chunked": HTTP/1.1, `Transfer-Encoding: chunked`, one chunk per written piece, keep-alive
  (cpp-httplib, Go's net/http, uvicorn);
- "close": no length and no chunking; the body ends when the server closes the connection
  (Python's `http.server` at its default HTTP/1.0: mlx-lm, KoboldCpp).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from scripted_server import Reply, ToolCall
from scripted_server.http_base import QuietHandler, TrackedHTTPServer

Framing = Literal["chunked", "close"]
#: (status, body, content type, reason phrase or None for the standard one).
Answer = tuple[int, bytes, str, str | None]


def json_answer(status: int, payload: Any, reason: str | None = None) -> Answer:
    return status, json.dumps(payload).encode(), "application/json", reason


def sse(payload: Any) -> bytes:
    """`data: <json>` and the blank line that ends the event (a str is sent verbatim)."""
    body = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {body}\n\n".encode()


def pieces(text: str, size: int = 6) -> list[str]:
    """The text as a model streams it: a few characters (about a token or two) at a time."""
    return [text[start : start + size] for start in range(0, len(text), size)]


@dataclass
class Turn:
    """What the server knows about one chat request when it answers it."""

    serial: int
    request: dict[str, Any]
    #: The whole prompt, in tokens (about 4 characters each, tools included).
    prompt_tokens: int
    #: The part of it found in the server's prompt cache (the previous request's prefix).
    cached_tokens: int
    completion_tokens: int
    include_usage: bool

    @property
    def model(self) -> str:
        model = self.request.get("model")
        return model if isinstance(model, str) else ""


class PromptCache:
    """A prompt cache as servers keep one: the longest common prefix with the last prompt."""

    def __init__(self) -> None:
        self.last = ""

    @staticmethod
    def text(request: dict[str, Any]) -> str:
        prompt = json.dumps(request.get("tools") or [], ensure_ascii=False)
        return prompt + json.dumps(request.get("messages") or [], ensure_ascii=False)

    def size(self, request: dict[str, Any]) -> int:
        """The prompt's tokens, the cache left as it is."""
        return len(self.text(request)) // 4

    def take(self, request: dict[str, Any]) -> tuple[int, int]:
        """The prompt's tokens and those found in the cache, which then holds this prompt."""
        prompt = self.text(request)
        shared = 0
        for mine, theirs in zip(prompt, self.last, strict=False):
            if mine != theirs:
                break
            shared += 1
        self.last = prompt
        return len(prompt) // 4, shared // 4


class Emulator:
    """One server family. Subclasses set the class attributes and override the hooks."""

    #: The name the README's server table and the test ids use.
    name: ClassVar[str] = "server"
    protocol_version: ClassVar[str] = "HTTP/1.1"
    framing: ClassVar[Framing] = "chunked"
    #: How plain JSON answers end: "length" (Content-Length) or "close" (mlx-lm).
    json_framing: ClassVar[Literal["length", "close"]] = "length"
    #: The path prefix a person gives mm-tui (the base URL is root + this).
    base_path: ClassVar[str] = "/v1"
    chat_paths: ClassVar[tuple[str, ...]] = ("/v1/chat/completions",)
    #: False: the server drops or refuses `tools`; the model writes its calls as text.
    native_tools: ClassVar[bool] = True
    #: The model id the server lists.
    model: ClassVar[str] = "model"
    #: The context it serves the model with, where it says so.
    context: ClassVar[int] = 16384
    stream_headers: ClassVar[tuple[tuple[str, str], ...]] = (("Content-Type", "text/event-stream"),)

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[dict[str, Any]] = []
        self.other_requests: list[tuple[str, str]] = []
        self.cache = PromptCache()
        self.lock = threading.Lock()
        self.serial = 0
        #: Set: each stream stops right after the first piece holding these bytes and the
        #: connection closes (a crash, or a proxy giving up): no closing chunk, no [DONE].
        self.cut_after: bytes | None = None
        self._httpd: _ZooHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- hooks -----------------------------------------------------------------------------

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        """The body of a streamed answer, piece by piece, exactly as the server writes it."""
        raise NotImplementedError

    def get(self, path: str) -> Answer | None:
        """A GET route; None: the server's 404."""
        return None

    def post(self, path: str, body: Any) -> Answer | None:
        """A POST route other than chat; None: the server's 404."""
        return None

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        """An answer given instead of a completion (a field the server rejects)."""
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return 404, b"Not Found", "text/plain", None

    def call_id(self, turn: Turn, position: int) -> str:
        return f"call_{turn.serial:03d}_{position}"

    # -- what tests use --------------------------------------------------------------------

    def enqueue(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    @property
    def root_url(self) -> str:
        assert self._httpd is not None, "the emulator is not started"
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    @property
    def base_url(self) -> str:
        return self.root_url + self.base_path

    def start(self) -> Emulator:
        handler = type(f"{type(self).__name__}Handler", (_Handler,),
                       {"protocol_version": self.protocol_version})  # fmt: skip
        self._httpd = _ZooHTTPServer(self, handler)
        self._thread = self._httpd.serve_in_thread(f"zoo:{self.name}")
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        httpd.stop(thread)
        self._httpd = self._thread = None

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # -- used by the handler ---------------------------------------------------------------

    def take_turn(self, body: dict[str, Any]) -> tuple[Reply, Turn]:
        with self.lock:
            self.requests.append(body)
            reply = self.replies.popleft() if self.replies else Reply("[zoo: script exhausted]")
            self.serial += 1
            prompt, cached = self.cache.take(body)
        produced = len(reply.text) + sum(len(c.arguments_text()) for c in reply.tool_calls)
        options = body.get("stream_options")
        asked = isinstance(options, dict) and bool(options.get("include_usage"))
        turn = Turn(self.serial, body, prompt, cached, max(produced // 4, 1), asked)
        return reply, turn


def call_arguments(call: ToolCall) -> str:
    return call.arguments_text()


class _ZooHTTPServer(TrackedHTTPServer):
    """The zoo's HTTP server (the scripted server's plumbing): its handlers reach the emulator."""

    def __init__(self, emulator: Emulator, handler: type[_Handler]) -> None:
        self.emulator = emulator
        super().__init__(0, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Silent: an emulator cuts streams and a client hangs up, on purpose."""


class _Handler(QuietHandler):
    """One connection, read as the scripted server reads it, answered by the emulator."""

    server: _ZooHTTPServer  # pyright: ignore[reportIncompatibleVariableOverride]

    @property
    def emulator(self) -> Emulator:
        return self.server.emulator

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        path = self.request_path()
        with self.emulator.lock:
            self.emulator.other_requests.append(("GET", path))
        self.answer(self.emulator.get(path) or self.emulator.not_found("GET", path))

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        request = self.read_request()
        path, body = request.path, request.body
        emulator = self.emulator
        if path in emulator.chat_paths and isinstance(body, dict):
            self.chat(body)
            return
        with emulator.lock:
            emulator.other_requests.append(("POST", path))
        self.answer(emulator.post(path, body) or emulator.not_found("POST", path))

    def answer(self, answer: Answer) -> None:
        status, data, content_type, reason = answer
        self.send_response(status, reason)
        self.send_header("Content-Type", content_type)
        if self.emulator.json_framing == "length":
            self.send_header("Content-Length", str(len(data)))
        else:
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def chat(self, body: dict[str, Any]) -> None:
        emulator = self.emulator
        refusal = emulator.refuse(body)
        if refusal is not None:
            with emulator.lock:
                emulator.requests.append(body)
            self.answer(refusal)
            return
        reply, turn = emulator.take_turn(body)
        events = emulator.stream_events(reply, turn)
        cut = emulator.cut_after is not None
        if emulator.cut_after is not None:
            marker = emulator.cut_after
            events = events[: next((n + 1 for n, e in enumerate(events) if marker in e), None)]
        chunked = emulator.framing == "chunked"
        self.send_response(200)
        for name, value in emulator.stream_headers:
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        # A `Connection: keep-alive` the server writes does not keep a connection the client
        # asked to close (Go's net/http, uvicorn), and close-delimited bodies always close.
        asked_close = self.headers.get("Connection", "").lower() == "close"
        self.close_connection = asked_close or not chunked
        try:
            for event in events:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event) if chunked else event)
                self.wfile.flush()
            if chunked and not cut:
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        self.close_connection = self.close_connection or cut
