"""The scripted server's endpoints beside chat completions, each as the real server answers it:
the model list (with each server's `owned_by`), llama-server's `/props` and `/tokenize`,
vLLM's `/tokenize`, Ollama's `/api/version` and `/api/show`.

What was checked against the real servers' code or logs:
- `owned_by` on `GET /v1/models`: llama-server writes `"llamacpp"`, vLLM `"vllm"`, LM Studio
  `"organization_owner"`, Ollama the model name's namespace (`"library"` for the official ones,
  ollama/ollama `openai/openai.go`).
- Ollama answers `GET /api/version` with `{"version": "0.12.3"}` (`server/routes.go`).
- llama-server: `POST /tokenize` `{"content": "..."}` → `{"tokens": [...]}`; vLLM:
  `POST /tokenize` `{"model": ..., "prompt": "..."}` → `{"count", "max_model_len", "tokens"}`.
  The scripted tokenizer counts one token per 3 characters (rounded up), so a test can tell
  the server's count from mm-tui's own estimate (4 characters a token).
"""

from __future__ import annotations

import math
from typing import Any, Protocol


class ScriptedServer(Protocol):
    """What the side routes read of the server (its settings, changeable while serving)."""

    @property
    def dialect(self) -> str: ...

    models: list[str]
    n_ctx: int | None
    ollama_ctx: int | None
    ollama_num_ctx: int | None
    ollama_loaded: int | None
    ollama_version: str


#: What each dialect writes in `owned_by` on the model list.
OWNED_BY = {
    "openai": "scripted",
    "ollama": "library",
    "llamacpp": "llamacpp",
    "llamacpp_legacy": "llamacpp",
    "lmstudio": "organization_owner",
    "vllm": "vllm",
}
OLLAMA_VERSION = "0.12.3"
CHARS_PER_SCRIPTED_TOKEN = 3

Answer = tuple[int, Any]


def scripted_tokens(text: str) -> list[int]:
    """The scripted tokenizer: one token per 3 characters, as made-up ids."""
    return list(range(math.ceil(len(text) / CHARS_PER_SCRIPTED_TOKEN)))


def answer_get(owner: ScriptedServer, path: str) -> Answer | None:
    """The answer to a GET, or None when this server has no such route."""
    dialect = owner.dialect
    if path in ("/v1/models", "/models"):
        owned_by = OWNED_BY[dialect]
        data = [{"id": name, "object": "model", "owned_by": owned_by} for name in owner.models]
        return 200, {"object": "list", "data": data}
    if path == "/props" and owner.n_ctx is not None:
        settings = {"n_ctx": owner.n_ctx, "params": {}}
        return 200, {"default_generation_settings": settings, "total_slots": 1}
    if path == "/api/version" and dialect == "ollama":
        return 200, {"version": owner.ollama_version}
    if path == "/api/ps" and dialect == "ollama" and owner.ollama_loaded is not None:
        loaded = [{"name": name, "model": name, "context_length": owner.ollama_loaded}
                  for name in owner.models]  # fmt: skip
        return 200, {"models": loaded}
    return None


def answer_post(owner: ScriptedServer, path: str, body: Any) -> Answer | None:
    """The answer to a POST other than chat completions, or None when there is no route."""
    dialect = owner.dialect
    if path == "/api/show" and owner.ollama_ctx is not None:
        return 200, ollama_show(owner)
    if path == "/tokenize" and isinstance(body, dict):
        if dialect.startswith("llamacpp") and isinstance(body.get("content"), str):
            return 200, {"tokens": scripted_tokens(body["content"])}
        if dialect == "vllm" and isinstance(body.get("prompt"), str):
            tokens = scripted_tokens(body["prompt"])
            return 200, {"count": len(tokens), "max_model_len": owner.n_ctx, "tokens": tokens}
    return None


def ollama_show(owner: ScriptedServer) -> dict[str, Any]:
    """The parts of Ollama's /api/show an agent reads to learn the context window."""
    num_ctx = owner.ollama_num_ctx
    return {
        "parameters": f"num_ctx                        {num_ctx}" if num_ctx else "",
        "details": {"format": "gguf", "family": "llama"},
        "model_info": {
            "general.architecture": "llama",
            "llama.context_length": owner.ollama_ctx,
        },
    }
