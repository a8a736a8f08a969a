"""The constrained retry end to end (`python -m bench.real_model --constrained-e2e`): a real
`mm-tui -p` process talks to the real llama-server through this relay, which passes every
request and answer through unchanged but one: the model's first reply, which it writes itself
as llama-server streams a call, a bash call whose arguments no repair reads (the tiny model
never writes a call of its own). So the retry mm-tui then sends is the one a real turn sends,
the real server answers it under the grammar, mm-tui runs the call, and the real model
answers from its output. The relay records what went through.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BROKEN_ARGUMENTS = '{"command" "ls" :: ]]'


def broken_reply() -> bytes:
    """A bash call as llama-server streams one (server-task.cpp), arguments unreadable."""
    base = {"created": 0, "id": "chatcmpl-relay", "model": "smollm2",
            "object": "chat.completion.chunk"}  # fmt: skip
    deltas: list[tuple[dict[str, Any], str | None]] = [
        ({"role": "assistant", "content": None}, None),
        ({"tool_calls": [{"index": 0, "id": "relaycall0", "type": "function",
                          "function": {"name": "bash", "arguments": ""}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": BROKEN_ARGUMENTS}}]}, None),
        ({}, "tool_calls"),
    ]  # fmt: skip
    events = [
        {**base, "choices": [{"finish_reason": reason, "index": 0, "delta": delta}]}
        for delta, reason in deltas
    ]
    return b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in events) + b"data: [DONE]\n\n"


class Relay(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self.chats: list[dict[str, Any]] = []  # each chat request, and what the relay did
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def port(self) -> int:
        return self.server_address[1]


class _Handler(BaseHTTPRequestHandler):
    server: Relay  # pyright: ignore[reportIncompatibleVariableOverride]
    protocol_version = "HTTP/1.0"  # every answer ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        """Silent."""

    def do_GET(self) -> None:  # noqa: N802 - stdlib naming
        self.forward(None)

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if not self.path.endswith("/chat/completions"):
            self.forward(body)
            return
        request = json.loads(body)
        with self.server.lock:
            first = not self.server.chats
            self.server.chats.append({"request": request, "answered by": "relay" if first
                                      else "llama-server", "answer": ""})  # fmt: skip
            record = self.server.chats[-1]
        if first:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(broken_reply())
            return
        record["answer"] = self.forward(body)

    def forward(self, body: bytes | None) -> str:
        """The request to llama-server, its answer back as it comes; the answer's text."""
        upstream = urllib.request.Request(self.server.upstream + self.path, data=body,
                                          method=self.command)  # fmt: skip
        if body is not None:
            upstream.add_header("Content-Type", "application/json")
        try:
            answer = urllib.request.urlopen(upstream, timeout=600)
        except urllib.error.HTTPError as refused:
            answer = refused
        seen = bytearray()
        with answer:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.headers.get("Content-Type", "text/plain"))
            self.end_headers()
            while piece := answer.read1(65536):
                seen += piece
                self.wfile.write(piece)
                self.wfile.flush()
        return _streamed_text(bytes(seen))


def _streamed_text(body: bytes) -> str:
    """The `content` of an SSE answer, joined (the whole body when it is not one)."""
    text = []
    for line in body.decode("utf-8", "replace").splitlines():
        if line.startswith("data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                text.append((choice.get("delta") or {}).get("content") or "")
    return "".join(text) if text else body.decode("utf-8", "replace")[:400]
