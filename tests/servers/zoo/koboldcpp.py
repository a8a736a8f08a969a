"""KoboldCpp's OpenAI-compatible API (LostRuins/koboldcpp), as a client sees it.

Follows `koboldcpp.py` @ 2da346a5 (KcppVersion 1.76): `ServerRequestHandler` is a
`http.server.SimpleHTTPRequestHandler` at its default HTTP/1.0, so a stream ends when the
connection closes, whatever its `connection: keep-alive` header says (`handle_sse_stream`):
- every chunk is `{"id": "koboldcpp", ...}` and its delta repeats `"role": "assistant"`;
- `finish_reason` is the global `currfinishreason`, which holds the STRING `"null"` until the
  generation ends (not JSON null); the last chunk has `content: ""` and "stop" or "length";
- `send_oai_sse_event('[DONE]')` writes `data: [DONE]` with no blank line after it;
- no usage while streaming; tools are only put in the prompt when `tool_choice` is set, and a
  streamed answer is never parsed for calls: a model's call arrives as text;
- `GET /v1/models` (`koboldcpp/<model>`), `GET /api/extra/true_max_context_length` (the
  `--contextsize`), `GET /api/extra/version`.
"""

from __future__ import annotations

import json
import time

from mm_tui.scripted_server import Reply
from tests.servers.zoo.base import Answer, Emulator, Turn, json_answer, pieces

CORS = (("access-control-allow-origin", "*"), ("access-control-allow-methods", "*"),
        ("cache-control", "no-store"))  # fmt: skip


class KoboldCpp(Emulator):
    name = "koboldcpp"
    protocol_version = "HTTP/1.0"
    framing = "close"
    native_tools = False
    model = "koboldcpp/Qwen2.5-Coder-14B-Instruct-Q4_K_M"
    context = 16384  # --contextsize 16384
    stream_headers = (("cache-control", "no-cache"), ("connection", "keep-alive"), *CORS,
                      ("content-type", "text/event-stream"))  # fmt: skip

    def event(self, content: str, reason: str) -> bytes:
        chunk = {"id": "koboldcpp", "object": "chat.completion.chunk", "created": int(time.time()),
                 "model": self.model, "choices": [{"index": 0, "finish_reason": reason,
                 "delta": {"role": "assistant", "content": content}}]}  # fmt: skip
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        events = [self.event(piece, "null") for piece in pieces(reply.text)]
        return [*events, self.event("", "stop"), b"data: [DONE]"]

    def get(self, path: str) -> Answer | None:
        if path.endswith("/v1/models"):
            card = {"id": self.model, "object": "model", "created": int(time.time()),
                    "owned_by": "koboldcpp", "permission": [], "root": "koboldcpp"}  # fmt: skip
            return json_answer(200, {"object": "list", "data": [card]})
        if path.endswith("/api/extra/true_max_context_length"):
            return json_answer(200, {"value": self.context})
        if path.endswith("/api/extra/version"):
            return json_answer(200, {"result": "KoboldCpp", "version": "1.76"})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"detail": {"error": "Not found", "type": "not_found"}})
