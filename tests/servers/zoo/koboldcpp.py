"""KoboldCpp's OpenAI-compatible API (LostRuins/koboldcpp), as a client sees it: the current
release, and 1.76 whose stream differs.

KoboldCpp 1.113 (`KcppVersion = "1.113.1"`; its server module, `KcppServerRequestHandler`:
`handle_sse_stream` and `do_POST`'s "fake streaming for openai tool calls"; the index holds it
without its path or commit): the handler is a `http.server.SimpleHTTPRequestHandler` at its
default HTTP/1.0, so a stream ends when the connection closes, whatever its `connection:
keep-alive` header says. When the request has `tools`, nothing streams while the model
writes: `handle_sse_stream` sends the headers and returns, and once the answer is whole:
- with calls (`repack_toolcall_tags` found some), the text around them is dropped
  (`recvtxt = None`); per call a chunk with `index`, `id` (`call_` + 5 digits), `type`,
  `function: {name, arguments: ""}`, then one with its whole `arguments`;
- without, the whole text in one `content` chunk;
- then `{"delta": {}, "finish_reason": "tool_calls" | "stop"}` and `data: [DONE]`; every chunk's
  `id` is `"koboldcpp"`; no role chunk, no usage.

KoboldCpp 1.76 (`koboldcpp.py` @ 2da346a5, `handle_sse_stream`): tools only go into the prompt
when `tool_choice` is set and a stream is never parsed for calls (a model's call arrives as
text); every delta repeats `"role": "assistant"`; `finish_reason` is the global
`currfinishreason`, the STRING `"null"` until the generation ends; `data: [DONE]` is written
with no blank line after it.

Both: `GET /v1/models` (`koboldcpp/<model>`), `GET /api/extra/true_max_context_length` (the
`--contextsize`), `GET /api/extra/version`.

Structured output: 1.113's `transform_genparams` ("handle structured outputs") turns
`response_format` `json_schema` into a GBNF `grammar` (`convert_json_to_gbnf` of its
`json_schema.schema`), `json_object` into its JSON grammar, and reads a top-level
`json_schema` the same way; a schema it cannot convert is discarded with a printed line and
the model writes freely. 1.76 reads no `response_format` (only a GBNF `grammar`, its own
field): a schema is dropped without a word.
"""

from __future__ import annotations

import json
import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import Constrained, openai_schema

CORS = (("access-control-allow-origin", "*"), ("access-control-allow-methods", "*"),
        ("cache-control", "no-store"))  # fmt: skip


class KoboldCpp(Constrained):
    name = "koboldcpp"
    protocol_version = "HTTP/1.0"
    framing = "close"
    model = "koboldcpp/Qwen2.5-Coder-14B-Instruct-Q4_K_M"
    context = 16384  # --contextsize 16384
    version = "1.113.1"
    stream_headers = (("X-Accel-Buffering", "no"), ("cache-control", "no-cache"),
                      ("connection", "keep-alive"), *CORS,
                      ("content-type", "text/event-stream"))  # fmt: skip

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        schema = openai_schema(request)
        if schema is None and isinstance(request.get("json_schema"), dict):
            schema = request["json_schema"]
        return schema

    def call_id(self, turn: Turn, position: int) -> str:
        return f"call_{10000 + turn.serial * 10 + position}"

    def chunk(self, delta: dict[str, Any], reason: str | None = None) -> bytes:
        return sse({"id": "koboldcpp", "object": "chat.completion.chunk",
                    "created": int(time.time()), "model": self.model,
                    "choices": [{"index": 0, "finish_reason": reason, "delta": delta}]})  # fmt: skip

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        events: list[bytes] = []
        for position, call in enumerate(reply.tool_calls):
            meta = {"index": position, "id": self.call_id(turn, position), "type": "function",
                    "function": {"name": call.name, "arguments": ""}}  # fmt: skip
            events.append(self.chunk({"tool_calls": [meta]}))
            arguments = {"index": position, "function": {"arguments": call.arguments_text()}}
            events.append(self.chunk({"tool_calls": [arguments]}))
        if not reply.tool_calls and reply.text:
            events.append(self.chunk({"content": reply.text}))
        events.append(self.chunk({}, "tool_calls" if reply.tool_calls else "stop"))
        return [*events, sse("[DONE]")]

    def get(self, path: str) -> Answer | None:
        if path.endswith("/v1/models"):
            card = {"id": self.model, "object": "model", "created": int(time.time()),
                    "owned_by": "koboldcpp", "permission": [], "root": "koboldcpp"}  # fmt: skip
            return json_answer(200, {"object": "list", "data": [card]})
        if path.endswith("/api/extra/true_max_context_length"):
            return json_answer(200, {"value": self.context})
        if path.endswith("/api/extra/version"):
            return json_answer(200, {"result": "KoboldCpp", "version": self.version})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"detail": {"error": "Not found", "type": "not_found"}})


class KoboldCpp176(KoboldCpp):
    name = "koboldcpp-1.76"
    native_tools = False
    version = "1.76"
    stream_headers = (("cache-control", "no-cache"), ("connection", "keep-alive"), *CORS,
                      ("content-type", "text/event-stream"))  # fmt: skip

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        return None

    def event(self, content: str, reason: str) -> bytes:
        chunk = {"id": "koboldcpp", "object": "chat.completion.chunk", "created": int(time.time()),
                 "model": self.model, "choices": [{"index": 0, "finish_reason": reason,
                 "delta": {"role": "assistant", "content": content}}]}  # fmt: skip
        return f"data: {json.dumps(chunk)}\n\n".encode()

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        events = [self.event(piece, "null") for piece in pieces(reply.text)]
        return [*events, self.event("", "stop"), b"data: [DONE]"]
