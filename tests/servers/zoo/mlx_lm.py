"""`mlx_lm.server` (ml-explore/mlx-lm), as a client sees it.

Follows `mlx_lm/server.py` @ d78bf58e (2026-08-22): `APIHandler` is a
`BaseHTTPRequestHandler` that never sets `protocol_version`, so it answers HTTP/1.0; no
response but the non-streamed completion has a Content-Length, so a stream -- and even the
`/v1/models` JSON -- ends when the server closes the connection (`ThreadingHTTPServer`):
- `: keepalive N/M` comments while the prompt is processed (`keepalive_callback`);
- every chunk's delta repeats `"role": "assistant"` (`generate_response`); text as `content`;
- tool calls arrive whole (`ToolCallFormatter`, streaming: `index` numbered, a uuid4 `id`,
  `arguments` a JSON string), in the chunk written once the tool text ends -- for a call that
  ends the answer, the last chunk, together with `finish_reason: "tool_calls"`;
- with `include_usage`, a usage chunk whose `object` is `chat.completion` (not `.chunk`) and
  `choices: []`; `prompt_tokens` the whole prompt, `prompt_tokens_details.cached_tokens` the
  part found in the prompt cache; then `data: [DONE]`;
- unknown paths: 404 with the body `Not Found`; `GET /v1/models` lists the model by its path;
- no structured output: the request's fields are read one by one and `response_format` is
  not among them (the only logits processors are the repetition penalties and `logit_bias`):
  a schema is dropped without a word and the model writes freely.
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Emulator, Turn, json_answer, pieces, sse


class MlxLm(Emulator):
    name = "mlx_lm.server"
    protocol_version = "HTTP/1.0"
    framing = "close"
    json_framing = "close"
    chat_paths = ("/v1/chat/completions", "/chat/completions")
    model = "mlx-community/Qwen2.5-Coder-14B-Instruct-4bit"
    stream_headers = (("Content-type", "text/event-stream"), ("Cache-Control", "no-cache"))

    def call_id(self, turn: Turn, position: int) -> str:
        return str(uuid.UUID(int=turn.serial << 16 | position))

    def chunk(self, turn: Turn, delta: dict[str, Any], reason: str | None) -> dict[str, Any]:
        return {"id": f"chatcmpl-{uuid.UUID(int=turn.serial)}",
                "system_fingerprint": "0.29.0-0.30.0-macOS-15.5-arm64-applegpu_g15s",
                "object": "chat.completion.chunk", "model": turn.model,
                "created": int(time.time()),
                "choices": [{"index": 0, "finish_reason": reason,
                             "delta": {"role": "assistant", **delta}}]}  # fmt: skip

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        total = turn.prompt_tokens - turn.cached_tokens
        events = [f": keepalive {done}/{total}\n\n".encode() for done in (0, total // 2)]
        events += [sse(self.chunk(turn, {"content": p}, None)) for p in pieces(reply.text)]
        last: dict[str, Any] = {}
        if reply.tool_calls:
            last["tool_calls"] = [
                {"function": {"name": call.name, "arguments": call.arguments_text()},
                 "type": "function", "id": self.call_id(turn, position), "index": position}
                for position, call in enumerate(reply.tool_calls)
            ]  # fmt: skip
        reason = "tool_calls" if reply.tool_calls else "stop"
        events.append(sse(self.chunk(turn, last, reason)))
        if turn.include_usage:
            usage = {"prompt_tokens": turn.prompt_tokens,
                     "completion_tokens": turn.completion_tokens,
                     "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                     "prompt_tokens_details": {"cached_tokens": turn.cached_tokens}}  # fmt: skip
            events.append(sse({"id": f"chatcmpl-{uuid.UUID(int=turn.serial)}",
                               "system_fingerprint": "zoo", "object": "chat.completion",
                               "model": turn.model, "created": int(time.time()),
                               "choices": [], "usage": usage}))  # fmt: skip
        return [*events, sse("[DONE]")]

    def get(self, path: str) -> Answer | None:
        if path.startswith("/v1/models"):
            card = {"id": self.model, "object": "model", "created": int(time.time())}
            return json_answer(200, {"object": "list", "data": [card]})
        if path == "/health":
            return json_answer(200, {"status": "ok"})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return 404, b"Not Found", "application/json", None
