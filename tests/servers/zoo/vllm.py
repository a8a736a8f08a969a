"""vLLM's OpenAI-compatible server (vllm-project/vllm `vllm/entrypoints/openai`), as a client
sees it with `--enable-auto-tool-choice --tool-call-parser hermes`.

Follows `vllm/entrypoints/openai/serving_chat.py` @ 99c5632f
(`chat_completion_stream_generator`), `protocol.py` (`ChatCompletionStreamResponse`,
`DeltaToolCall`, `ModelCard`, `ErrorResponse`/`ErrorInfo`) and `api_server.py`:
- uvicorn: HTTP/1.1 keep-alive, the stream chunked; `data: {json}` events, `data: [DONE]`;
- a first chunk `{"role": "assistant", "content": ""}` (with `logprobs: null`,
  `finish_reason: null`); text in pieces; a tool call's first delta carries `id`
  (`chatcmpl-tool-<hex>`), `type` and `function.name` only (`exclude_unset`), its arguments
  then come in pieces; the last chunk carries `finish_reason` and `stop_reason`;
- usage only with `include_usage`, in a last chunk with `choices: []`; `prompt_tokens` is the
  whole prompt; `prompt_tokens_details.cached_tokens` only with
  `--enable-prompt-tokens-details` (not here);
- errors `{"error": {"message", "type", "param", "code"}}` (`code` the HTTP status), an unknown
  model 404 `NotFoundError`, a prompt over `max_model_len` 400 `BadRequestError`; FastAPI's
  `{"detail": "Not Found"}` for an unknown path;
- `GET /v1/models` lists the model with `max_model_len` (what the server runs it with);
- structured output (`protocol.py`, `ChatCompletionRequest.to_sampling_params`):
  `response_format` `json_schema` (its `json_schema.schema`) or `json_object` (any object)
  becomes the structured-outputs constraint, as do `structured_outputs: {"json"}` and the
  older `guided_json`; the grammar backend (xgrammar) holds the model to it.
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import Constrained, openai_schema


class Vllm(Constrained):
    name = "vllm"
    model = "Qwen/Qwen2.5-Coder-14B-Instruct"
    context = 16384  # --max-model-len 16384

    def call_id(self, turn: Turn, position: int) -> str:
        return f"chatcmpl-tool-{turn.serial:016x}{position:016x}"

    def chunk(self, turn: Turn, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": f"chatcmpl-{turn.serial:032x}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": turn.model, "choices": choices}  # fmt: skip

    def delta(self, turn: Turn, delta: dict[str, Any], reason: str | None = None) -> dict:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None,
                                  "finish_reason": reason}  # fmt: skip
        if reason is not None:
            choice["stop_reason"] = None
        return self.chunk(turn, [choice])

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        chunks = [self.delta(turn, {"role": "assistant", "content": ""})]
        chunks += [self.delta(turn, {"content": piece}) for piece in pieces(reply.text)]
        for position, call in enumerate(reply.tool_calls):
            opening = {"id": self.call_id(turn, position), "type": "function",
                       "index": position, "function": {"name": call.name}}  # fmt: skip
            chunks.append(self.delta(turn, {"tool_calls": [opening]}))
            for piece in pieces(call.arguments_text(), 4):
                fragment = {"index": position, "function": {"arguments": piece}}
                chunks.append(self.delta(turn, {"tool_calls": [fragment]}))
        reason = "tool_calls" if reply.tool_calls else "stop"
        chunks.append(self.delta(turn, {"content": ""}, reason))
        if turn.include_usage:
            usage = {"prompt_tokens": turn.prompt_tokens,
                     "total_tokens": turn.prompt_tokens + turn.completion_tokens,
                     "completion_tokens": turn.completion_tokens}  # fmt: skip
            chunks.append({**self.chunk(turn, []), "usage": usage})
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        outputs = request.get("structured_outputs")
        for schema in (outputs.get("json") if isinstance(outputs, dict) else None,
                       request.get("guided_json")):  # fmt: skip
            if isinstance(schema, dict):
                return schema
        return openai_schema(request)

    def error(self, status: int, kind: str, message: str, param: str | None = None) -> Answer:
        info = {"message": message, "type": kind, "param": param, "code": status}
        return json_answer(status, {"error": info})

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        model = request.get("model")
        if model != self.model:
            return self.error(404, "NotFoundError", f"The model `{model}` does not exist.",
                              "model")  # fmt: skip
        prompt = self.cache.size(request)
        if prompt > self.context:
            return self.error(400, "BadRequestError", f"This model's maximum context length "
                              f"is {self.context} tokens. However, your request has {prompt} "
                              "input tokens. Please reduce the length of the input messages.")  # fmt: skip
        return None

    def get(self, path: str) -> Answer | None:
        if path != "/v1/models":
            return None
        permission = {"id": "modelperm-zoo", "object": "model_permission", "created": 0,
                      "allow_create_engine": False, "allow_sampling": True,
                      "allow_logprobs": True, "allow_search_indices": False,
                      "allow_view": True, "allow_fine_tuning": False, "organization": "*",
                      "group": None, "is_blocking": False}  # fmt: skip
        card = {"id": self.model, "object": "model", "created": int(time.time()),
                "owned_by": "vllm", "root": self.model, "parent": None,
                "max_model_len": self.context, "permission": [permission]}  # fmt: skip
        return json_answer(200, {"object": "list", "data": [card]})

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"detail": "Not Found"})
