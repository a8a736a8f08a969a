"""text-generation-webui's OpenAI-compatible API (oobabooga/text-generation-webui), as a
client sees it with `--api`.

Follows `modules/api/completions.py` (`chat_completions_common`, `chat_streaming_chunk`),
`modules/api/script.py` (`EventSourceResponse(generator(), sep="\n")`, the routes),
`modules/api/models.py` and `modules/tool_parsing.py` (`get_tool_call_id`) @ 1dcde41d
(2026-05-03):
- uvicorn with sse-starlette: HTTP/1.1 keep-alive, the stream chunked, events written
  `data: {json}` with `\n` line ends, then `data: [DONE]`;
- a first chunk `{"role": "assistant", "refusal": null, "content": ""}`; `system_fingerprint:
  null` and `logprobs: null` in every chunk; with `include_usage` every chunk has
  `"usage": null` and a last chunk has `choices: []` and the usage;
- generation stops as soon as a tool call is parsed from the text, and the calls (`call_` + 8
  characters, `index` numbered, arguments a JSON string) come whole in the LAST chunk, the
  one that carries `finish_reason: "tool_calls"`;
- `GET /v1/models` lists the loaded model (`owned_by: "user"`); FastAPI's 404;
- no `response_format` in `ChatCompletionRequest` (`modules/api/typing.py`; pydantic drops an
  unknown field): a schema is dropped without a word; its own constraint is a GBNF
  `grammar_string`.
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Emulator, Turn, json_answer, pieces

#: sse-starlette's ServerSentEvent with sep="\n".
SEP = "\n"


class TextGenerationWebui(Emulator):
    name = "text-generation-webui"
    model = "Qwen2.5-Coder-14B-Instruct-Q4_K_M.gguf"
    stream_headers = (("content-type", "text/event-stream; charset=utf-8"),
                      ("cache-control", "no-store"), ("connection", "keep-alive"),
                      ("x-accel-buffering", "no"))  # fmt: skip

    def call_id(self, turn: Turn, position: int) -> str:
        return f"call_{turn.serial:04d}{position:04d}"

    def event(self, data: str) -> bytes:
        return f"data: {data}{SEP}{SEP}".encode()

    def chunk(self, turn: Turn, delta: dict[str, Any], reason: str | None = None) -> dict:
        chunk: dict[str, Any] = {
            "id": f"chatcmpl-{turn.serial}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": self.model, "system_fingerprint": None,
            "choices": [{"index": 0, "finish_reason": reason, "delta": delta,
                         "logprobs": None}]}  # fmt: skip
        if turn.include_usage:
            chunk["usage"] = None
        return chunk

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        import json

        chunks = [self.chunk(turn, {"role": "assistant", "refusal": None, "content": ""})]
        chunks += [self.chunk(turn, {"content": piece}) for piece in pieces(reply.text)]
        last: dict[str, Any] = {}
        if reply.tool_calls:
            last["tool_calls"] = [
                {"type": "function", "function": {"name": call.name,
                                                  "arguments": call.arguments_text()},
                 "id": self.call_id(turn, position), "index": position}
                for position, call in enumerate(reply.tool_calls)]  # fmt: skip
        chunks.append(self.chunk(turn, last, "tool_calls" if reply.tool_calls else "stop"))
        if turn.include_usage:
            usage = {"prompt_tokens": turn.prompt_tokens,
                     "completion_tokens": turn.completion_tokens,
                     "total_tokens": turn.prompt_tokens + turn.completion_tokens}  # fmt: skip
            chunks.append({"id": f"chatcmpl-{turn.serial}", "object": "chat.completion.chunk",
                           "created": int(time.time()), "model": self.model,
                           "system_fingerprint": None, "choices": [], "usage": usage})  # fmt: skip
        return [self.event(json.dumps(chunk)) for chunk in chunks] + [self.event("[DONE]")]

    def get(self, path: str) -> Answer | None:
        if path == "/v1/models":
            card = {"id": self.model, "object": "model", "created": 0, "owned_by": "user"}
            return json_answer(200, {"object": "list", "data": [card]})
        if path == "/v1/internal/health":
            return json_answer(200, {"status": "ok"})
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return json_answer(404, {"detail": "Not Found"})
