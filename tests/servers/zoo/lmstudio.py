"""LM Studio's OpenAI-compatible server, as a client sees it (closed source: its documented
behaviour, and what its bug tracker shows on the wire).

Follows lmstudio-ai/docs `1_developer/2_rest/endpoints.mdx` (the v0 REST API:
`GET /api/v0/models` with `state`, `max_context_length`, `loaded_context_length`) and
`1_developer/openai-compat` (`GET /v1/models`, `POST /v1/chat/completions`, port 1234); the
stream shape recorded in lmstudio-bug-tracker #649 and #378, which the scripted server's
`lmstudio` dialect plays (`scripted_server/wire.py`): deltas repeat
`"role": "assistant"`, `logprobs: null`; a tool call's later fragments carry `"id": ""` and
`"function": {"name": "", "arguments": ...}`; usage with `include_usage` in a last chunk with
`choices: []`. Express: HTTP/1.1 keep-alive, the stream chunked. Errors `{"error": "..."}`, a
plain string; an unknown endpoint is answered 200 OK `{"error": "Unexpected endpoint or method.
(POST /api/show)"}` (lmstudio-bug-tracker #618, #1323: "Returning 200 anyway"). Structured output
(lmstudio-ai/docs, "Structured Output"): `response_format` `json_schema` on
`/v1/chat/completions` holds the model to the schema (its `json_schema.schema`).
"""

from __future__ import annotations

from typing import Any

from scripted_server import Reply
from scripted_server.wire import DIALECT_TRAITS, ChunkBuilder, ReplyContext
from tests.servers.zoo.base import Answer, Turn, json_answer, sse
from tests.servers.zoo.grammar import Constrained


class LmStudio(Constrained):
    name = "lm-studio"
    model = "qwen2.5-coder-14b-instruct"
    context = 16384  # lms load qwen2.5-coder-14b-instruct --context-length 16384

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        call_ids = [f"{turn.serial}{position:09d}" for position in range(len(reply.tool_calls))]
        context = ReplyContext(f"chatcmpl-{turn.serial}", turn.model, turn.request, call_ids)
        builder = ChunkBuilder(DIALECT_TRAITS["lmstudio"], context)
        usage = {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                 "total_tokens": turn.prompt_tokens + turn.completion_tokens}  # fmt: skip
        plan = builder.plan(reply, usage)
        chunks = [c for c in (*plan.head, *plan.tail) if isinstance(c, dict)] + plan.ending
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        if request.get("model") in (self.model, None):
            return None
        return json_answer(404, {"error": f"Model \"{request.get('model')}\" not found. "
                                 "Please specify a valid model."})  # fmt: skip

    def get(self, path: str) -> Answer | None:
        if path == "/v1/models":
            card = {"id": self.model, "object": "model", "owned_by": "organization_owner"}
            return json_answer(200, {"data": [card], "object": "list"})
        if path == "/api/v0/models":
            card = {"id": self.model, "object": "model", "type": "llm", "publisher": "lmstudio-community",
                    "arch": "qwen2", "compatibility_type": "gguf", "quantization": "Q4_K_M",
                    "state": "loaded", "max_context_length": 32768,
                    "loaded_context_length": self.context}  # fmt: skip
            return json_answer(200, {"object": "list", "data": [card]})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(200, {"error": f"Unexpected endpoint or method. ({method} {path})"})
