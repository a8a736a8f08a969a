"""SGLang's OpenAI-compatible server (sgl-project/sglang), as a client sees it with
`--tool-call-parser qwen25`.

Follows `python/sglang/srt/entrypoints/openai/serving_chat.py` @ 0c078e6f
(`_generate_chat_stream`, `_process_tool_call_stream`) and `protocol.py`
(`ChatCompletionStreamResponse`, `DeltaMessage`, `ToolCall`, `ModelCard`, `ErrorResponse`):
- uvicorn: HTTP/1.1 keep-alive, the stream chunked; `data: {json}` events, `data: [DONE]`;
- chunks written with `model_dump_json()` and no `exclude_none`: every field is there, null
  when unset (`"role": null`, `"reasoning_content": null`, `"usage": null`,
  `"matched_stop": null`), and a tool call's later fragments carry `"id": null` and
  `"name": null` beside their arguments;
- the first chunk `{"role": "assistant", "content": ""}`; a tool call's first fragment its id
  (`call_<hex>`), name and `"arguments": ""`; the finish chunk an all-null delta;
- usage with `include_usage` in a last chunk with `choices: []`; `prompt_tokens` the whole
  prompt (`cached_tokens` only with `--enable-cache-report`);
- errors flat, in vLLM's old shape: `{"object": "error", "message", "type", "param", "code"}`;
- `GET /v1/models` with `max_model_len`;
- structured output (`protocol.py`, `ChatCompletionRequest.to_sampling_params`):
  `response_format` `json_schema` becomes the sampling parameter `json_schema` (its
  `json_schema.schema`), `json_object` the schema `{"type": "object"}`; xgrammar holds the
  model to it.
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import Constrained


class Sglang(Constrained):
    name = "sglang"
    model = "Qwen/Qwen2.5-Coder-14B-Instruct"
    context = 32768

    def call_id(self, turn: Turn, position: int) -> str:
        return f"call_{turn.serial:012x}{position:012x}"

    def chunk(self, turn: Turn, choices: list[dict[str, Any]], usage: Any = None) -> dict:
        return {"id": f"{turn.serial:032x}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": turn.model, "choices": choices,
                "usage": usage}  # fmt: skip

    def delta(self, turn: Turn, reason: str | None = None, **fields: Any) -> dict[str, Any]:
        delta = {"role": None, "content": None, "reasoning_content": None, "tool_calls": None}
        delta.update(fields)
        return self.chunk(turn, [{"index": 0, "delta": delta, "logprobs": None,
                                  "finish_reason": reason, "matched_stop": None}])  # fmt: skip

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        chunks = [self.delta(turn, role="assistant", content="")]
        chunks += [self.delta(turn, content=piece) for piece in pieces(reply.text)]
        for position, call in enumerate(reply.tool_calls):
            first = {"id": self.call_id(turn, position), "index": position, "type": "function",
                     "function": {"name": call.name, "arguments": ""}}  # fmt: skip
            chunks.append(self.delta(turn, tool_calls=[first]))
            for piece in pieces(call.arguments_text(), 7):
                later = {"id": None, "index": position, "type": "function",
                         "function": {"name": None, "arguments": piece}}  # fmt: skip
                chunks.append(self.delta(turn, tool_calls=[later]))
        chunks.append(self.delta(turn, "tool_calls" if reply.tool_calls else "stop"))
        if turn.include_usage:
            usage = {"prompt_tokens": turn.prompt_tokens,
                     "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                     "completion_tokens": turn.completion_tokens,
                     "prompt_tokens_details": None, "reasoning_tokens": 0}  # fmt: skip
            chunks.append(self.chunk(turn, [], usage))
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        prompt = self.cache.size(request)
        if prompt <= self.context:
            return None
        return json_answer(400, {"object": "error", "message": f"The input ({prompt} tokens) "
                                 f"is longer than the model's context length ({self.context} "
                                 "tokens).", "type": "BadRequestError", "param": None,
                                 "code": 400})  # fmt: skip

    def get(self, path: str) -> Answer | None:
        if path == "/v1/models":
            card = {"id": self.model, "object": "model", "created": int(time.time()),
                    "owned_by": "sglang", "root": self.model,
                    "max_model_len": self.context}  # fmt: skip
            return json_answer(200, {"object": "list", "data": [card]})
        if path == "/get_model_info":
            return json_answer(200, {"model_path": self.model, "is_generation": True})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"detail": "Not Found"})
