"""LocalAI (mudler/LocalAI), as a client sees it.

Follows `core/http/endpoints/openai/chat.go` and `chat_emit.go`
(`buildDeferredToolCallChunks`, `streamUsageTrailerJSON`) and `core/schema/message.go`,
`core/schema/openai.go` @ 82c191af (2026-08-22):
- Echo on Go net/http: HTTP/1.1 keep-alive, the stream chunked; headers `Cache-Control:
  no-cache`, `Connection: keep-alive`; `data: {json}` events, `data: [DONE]`;
- `Message.Content` has no omitempty: the first chunk (`sentInitialRole`, in
  `chat_stream_workers.go`), the tool-call chunks and the finish chunk carry `"content": null`; each tool call comes as two chunks, its name (`"arguments": ""`) then its
  whole arguments, both repeating `role`, `id`, `type` and `index`;
- the finish chunk's delta is `{"content": null}`; with `include_usage` a trailer chunk with
  `choices: []` and `usage`;
- `GET /v1/models`; no endpoint says the context size;
- structured output (`chat.go`, "If we are using a response format, we need to generate a
  grammar for it"): `response_format` `json_schema` becomes a grammar (`JSONFunctionStructure`
  with the schema as its one `anyOf`), `json_object` the JSON grammar; a schema it cannot
  turn into a grammar is logged and the model writes freely.
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import Constrained


class LocalAI(Constrained):
    name = "localai"
    model = "qwen2.5-coder-14b-instruct"
    stream_headers = (("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache"),
                      ("Connection", "keep-alive"))  # fmt: skip

    def call_id(self, turn: Turn, position: int) -> str:
        return f"{self.response_id(turn)}-{position}"  # the parser gave none: id-<index>

    def response_id(self, turn: Turn) -> str:
        return f"8c5b2f1e-0000-4000-8000-{turn.serial:012d}"

    def chunk(self, turn: Turn, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"created": int(time.time()), "object": "chat.completion.chunk",
                "id": self.response_id(turn), "model": turn.model, "choices": choices}  # fmt: skip

    def delta(self, turn: Turn, delta: dict[str, Any], reason: str | None = None) -> dict:
        return self.chunk(turn, [{"index": 0, "finish_reason": reason, "delta": delta}])

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        chunks = [self.delta(turn, {"role": "assistant", "content": None})]
        chunks += [self.delta(turn, {"content": piece}) for piece in pieces(reply.text)]
        for position, call in enumerate(reply.tool_calls):
            common = {"index": position, "id": self.call_id(turn, position), "type": "function"}
            named = {**common, "function": {"name": call.name, "arguments": ""}}
            argued = {**common, "function": {"arguments": call.arguments_text()}}
            for tool_call in (named, argued):
                chunks.append(self.delta(turn, {"role": "assistant", "content": None,
                                                "tool_calls": [tool_call]}))  # fmt: skip
        reason = "tool_calls" if reply.tool_calls else "stop"
        chunks.append(self.delta(turn, {"content": None}, reason))
        if turn.include_usage:
            usage = {"prompt_tokens": turn.prompt_tokens,
                     "completion_tokens": turn.completion_tokens,
                     "total_tokens": turn.prompt_tokens + turn.completion_tokens}  # fmt: skip
            chunks.append({**self.chunk(turn, []), "usage": usage})
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def get(self, path: str) -> Answer | None:
        if path in ("/v1/models", "/models"):
            return json_answer(200, {"object": "list",
                                     "data": [{"id": self.model, "object": "model"}]})  # fmt: skip
        if path in ("/readyz", "/healthz"):
            return 200, b"OK", "text/plain", None
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"message": "Not Found"})
