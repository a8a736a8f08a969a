"""Ollama's OpenAI-compatible API (ollama/ollama), as a client sees it.

Follows `openai/openai.go` and `middleware/openai.go` (`ChatWriter.writeResponse`, `toChunk`,
`ToStreamChunks`, `FinishChunk`, `ToToolCalls`, `ToUsage`, `NewError`) and `server/routes.go`
(`toolCallId`, `PsHandler`, `ShowHandler`, the routes) @ fb307609 (2026-08-21):
- Go net/http behind gin: HTTP/1.1 keep-alive, the stream chunked; `data: {json}` events and
  `data: [DONE]`;
- `"role": "assistant"` only in the first chunk's delta; `content` kept even when "" (a Go
  `any`, not nil); each tool call arrives whole in one chunk (`call_` + 8 random characters,
  its own `index`), with `"content": ""`; then a finish chunk with an empty delta
  (`tool_calls` once a call was sent); with `include_usage` the finish chunk again with
  `choices: []` and `usage`;
- `usage.prompt_tokens` is `PromptEvalCount`: the tokens evaluated, the cached prefix left out
  (never 0: the last token is evaluated again); no `prompt_tokens_details`;
- an unknown model: 404 `{"error": {"message", "type": "not_found_error", "param": null,
  "code": null}}` (the native API answers `{"error": "..."}`); an unknown path: gin's
  `404 page not found`;
- `POST /api/show` (`model_info.<arch>.context_length`: what the model was trained with;
  `parameters` only holds a Modelfile's `num_ctx`), `GET /api/ps` (`context_length`: what the
  model is loaded with, here from `OLLAMA_CONTEXT_LENGTH`; a model is listed once a request
  loaded it), `GET /api/version`;
- structured output (`openai/openai.go`, `FromChatRequest`, since 0.5.0): `response_format`
  `json_schema` becomes the native request's `format` (its `json_schema.schema`, raw),
  `json_object` becomes `format: "json"`, any other type nothing; `format` then holds the
  model to the schema (to a JSON object for `"json"`). Before 0.5.0 (`Ollama047`, v0.4.7's
  `ResponseFormat` has only `type`) a `json_schema` is dropped without a word.
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import ANY_OBJECT, Constrained


class Ollama(Constrained):
    name = "ollama"
    model = "qwen2.5-coder:14b"
    context = 16384  # OLLAMA_CONTEXT_LENGTH=16384
    trained_context = 32768
    version = "0.13.5"

    def __init__(self) -> None:
        super().__init__()
        #: Per chat request, the native `format` the OpenAI layer made of it (None: none).
        self.formats: list[Any] = []

    def native_format(self, request: dict[str, Any]) -> Any:
        """`FromChatRequest`: `response_format` as the native API's `format`."""
        response_format = request.get("response_format")
        if not isinstance(response_format, dict):
            return None
        kind = str(response_format.get("type") or "").strip().lower()
        if kind == "json_object":
            return "json"
        wrapper = response_format.get("json_schema")
        if kind == "json_schema" and isinstance(wrapper, dict):
            return wrapper.get("schema")
        return None

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        native = self.native_format(request)
        with self.lock:
            self.formats.append(native)
        if native == "json":
            return ANY_OBJECT
        return native if isinstance(native, dict) else None

    def call_id(self, turn: Turn, position: int) -> str:
        return f"call_{turn.serial:04d}{position:04d}"

    def chunk(self, turn: Turn, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"id": f"chatcmpl-{turn.serial}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": turn.model,
                "system_fingerprint": "fp_ollama", "choices": choices}  # fmt: skip

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        deltas: list[dict[str, Any]] = [{"content": piece} for piece in pieces(reply.text)]
        if reply.tool_calls:
            calls = [{"id": self.call_id(turn, position), "index": position, "type": "function",
                      "function": {"name": call.name, "arguments": call.arguments_text()}}
                     for position, call in enumerate(reply.tool_calls)]  # fmt: skip
            deltas.append({"content": "", "tool_calls": calls})
        if not deltas:
            deltas.append({"content": ""})
        deltas[0] = {"role": "assistant", **deltas[0]}
        chunks = [self.chunk(turn, [{"index": 0, "delta": d, "finish_reason": None}])
                  for d in deltas]  # fmt: skip
        reason = "tool_calls" if reply.tool_calls else "stop"
        finish = self.chunk(turn, [{"index": 0, "delta": {}, "finish_reason": reason}])
        chunks.append(finish)
        if turn.include_usage:
            evaluated = max(turn.prompt_tokens - turn.cached_tokens, 1)
            usage = {"prompt_tokens": evaluated, "completion_tokens": turn.completion_tokens,
                     "total_tokens": evaluated + turn.completion_tokens}  # fmt: skip
            chunks.append({**finish, "choices": [], "usage": usage})
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        model = request.get("model")
        if model == self.model:
            return None
        error = {"message": f'model "{model}" not found, try pulling it first',
                 "type": "not_found_error", "param": None, "code": None}  # fmt: skip
        return json_answer(404, {"error": error})

    def get(self, path: str) -> Answer | None:
        if path == "/v1/models":
            return json_answer(200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "created": 1750000000,
                 "owned_by": "library"}]})  # fmt: skip
        if path == "/api/version":
            return json_answer(200, {"version": self.version})
        if path == "/api/ps":
            if not self.requests:  # nothing loaded yet: Ollama loads a model on demand
                return json_answer(200, {"models": []})
            details = {"format": "gguf", "family": "qwen2", "parameter_size": "14.8B",
                       "quantization_level": "Q4_K_M"}  # fmt: skip
            return json_answer(200, {"models": [{
                "name": self.model, "model": self.model, "size": 10_000_000_000,
                "digest": "3028237cc8c5", "details": details,
                "expires_at": "2026-12-05T15:00:00Z", "size_vram": 10_000_000_000,
                "context_length": self.context}]})  # fmt: skip
        if path == "/api/tags":
            return json_answer(200, {"models": [{"name": self.model, "model": self.model}]})
        return None

    def post(self, path: str, body: Any) -> Answer | None:
        if path != "/api/show":
            return None
        wanted = body.get("model") or body.get("name") if isinstance(body, dict) else None
        if wanted != self.model:
            return json_answer(404, {"error": f"model '{wanted}' not found"})
        return json_answer(200, {
            "modelfile": f"FROM {self.model}\n",
            "parameters": 'stop                           "<|im_end|>"',
            "template": "{{- range .Messages }}...",
            "details": {"format": "gguf", "family": "qwen2"},
            "model_info": {"general.architecture": "qwen2",
                           "qwen2.context_length": self.trained_context},
            "capabilities": ["completion", "tools", "insert"],
        })  # fmt: skip

    def not_found(self, method: str, path: str) -> Answer:
        return 404, b"404 page not found", "text/plain", None


class Ollama047(Ollama):
    """Ollama 0.4.7: its OpenAI layer turns only `json_object` into a `format`."""

    name = "ollama-0.4.7"
    version = "0.4.7"

    def native_format(self, request: dict[str, Any]) -> Any:
        response_format = request.get("response_format")
        if isinstance(response_format, dict) and response_format.get("type") == "json_object":
            return "json"
        return None
