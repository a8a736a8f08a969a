"""llamafile's server (Mozilla-Ocho/llamafile), as a client sees it: `llamafile --server`,
whose default is the llama.cpp server of mid-2024 it embeds.

Follows `llama.cpp/server/server.cpp` and `llama.cpp/server/oai.h` @ cfa861a6 (2025-06-30):
- cpp-httplib: HTTP/1.1 keep-alive, the stream chunked (`set_chunked_content_provider`);
- `oaicompat_completion_params_parse` never reads `tools`: the chat template never sees them
  and the model writes its calls as text; nothing is parsed;
- `format_partial_response_oaicompat`: the first token is split in a `{"role": "assistant"}`
  chunk and a `{"content"}` one; every chunk gets a NEW `id` (`gen_chatcmplid()` per chunk),
  no `system_fingerprint`; the last chunk `delta: {}` with "stop" or "length";
- no `data: [DONE]` and no usage in the stream: the body just ends;
- `GET /v1/models` names the model `unknown` (the default `model_alias`), `GET /props` has
  `default_generation_settings.n_ctx`.
- `oaicompat_completion_params_parse` reads no `response_format` either: a schema is dropped
  without a word; only a GBNF `grammar` constrains the model.
(The newer `llamafile --server --v2` answers a request with `tools` 400 "OpenAI tools field
not supported yet", `llamafile/server/v1_chat_completions.cpp`; mm-tui's text mode covers it.)
"""

from __future__ import annotations

import time
from typing import Any

from scripted_server import Reply
from tests.servers.zoo.base import Answer, Emulator, Turn, json_answer, pieces, sse


class Llamafile(Emulator):
    name = "llamafile"
    native_tools = False
    model = "unknown"
    context = 8192  # -c 8192

    def chunk(self, turn: Turn, number: int, choice: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [choice], "created": int(time.time()),
                "id": f"chatcmpl-{turn.serial}x{number}", "model": turn.model or self.model,
                "object": "chat.completion.chunk"}  # fmt: skip

    def stream_events(self, reply: Reply, turn: Turn) -> list[bytes]:
        deltas: list[dict[str, Any]] = [{"role": "assistant"}]
        deltas += [{"content": piece} for piece in pieces(reply.text)]
        choices = [{"finish_reason": None, "index": 0, "delta": delta} for delta in deltas]
        choices.append({"finish_reason": "stop", "index": 0, "delta": {}})
        return [sse(self.chunk(turn, n, choice)) for n, choice in enumerate(choices)]

    def get(self, path: str) -> Answer | None:
        if path == "/v1/models":
            card = {"id": self.model, "object": "model", "created": int(time.time()),
                    "owned_by": "llamacpp"}  # fmt: skip
            return json_answer(200, {"object": "list", "data": [card]})
        if path == "/props":
            settings = {"n_ctx": self.context, "model": "/models/model.gguf", "seed": -1}
            return json_answer(200, {"user_name": "", "assistant_name": "",
                                     "default_generation_settings": settings,
                                     "total_slots": 1})  # fmt: skip
        return None

    def not_found(self, method: str, path: str) -> Answer:
        return 404, b"File Not Found", "text/plain", None
