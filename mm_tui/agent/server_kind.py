"""Which server answers at a base URL: llama-server, Ollama, LM Studio, vLLM, or one we do not
know. Asked once per server, lazily, from what each writes about itself:

- `GET /v1/models` `owned_by`: llama-server `"llamacpp"`, vLLM `"vllm"`, LM Studio
  `"organization_owner"` (Ollama writes the model's namespace, which says nothing);
- `GET /api/version` answers `{"version": ...}` only on Ollama (its `server/routes.go`);
- `GET /props` with `default_generation_settings`: llama-server builds whose model list is older.

The constrained retry, the prompt's token count and `mm-tui doctor` read it.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from mm_tui.agent.context import fetch_json, root_url
from mm_tui.support.url_text import shown_url

log = logging.getLogger(__name__)

ServerName = Literal["llama-server", "ollama", "lm-studio", "vllm", "unknown"]

_OWNED_BY: dict[str, ServerName] = {
    "llamacpp": "llama-server",
    "vllm": "vllm",
    "organization_owner": "lm-studio",
    "organization-owner": "lm-studio",
}


@dataclass(frozen=True)
class ServerKind:
    """What answers, and its version where it says (Ollama)."""

    name: ServerName
    version: str = ""


def detect_server(base_url: str, timeout: float = 2.0) -> ServerKind:
    """Ask the server what it is; `unknown` when nothing it answers says."""
    root = root_url(base_url)
    try:
        listing = fetch_json(f"{base_url.rstrip('/')}/models", None, timeout)
        items = listing.get("data") if isinstance(listing, dict) else None
        for item in items if isinstance(items, list) else []:
            owner = item.get("owned_by") if isinstance(item, dict) else None
            if isinstance(owner, str) and owner in _OWNED_BY:
                return ServerKind(_OWNED_BY[owner])
    except (OSError, ValueError):
        log.debug("no model list at %s", shown_url(root), exc_info=True)
    try:
        answer = fetch_json(f"{root}/api/version", None, timeout)
        if isinstance(answer, dict) and isinstance(answer.get("version"), str):
            return ServerKind("ollama", answer["version"])
    except (OSError, ValueError):
        log.debug("no Ollama /api/version at %s", shown_url(root), exc_info=True)
    try:
        props = fetch_json(f"{root}/props", None, timeout)
        if isinstance(props, dict) and "default_generation_settings" in props:
            return ServerKind("llama-server")
    except (OSError, ValueError):
        log.debug("no llama-server /props at %s", shown_url(root), exc_info=True)
    return ServerKind("unknown")


def version_at_least(version: str, wanted: tuple[int, ...]) -> bool:
    """`0.12.3` ≥ (0, 5): a version we cannot read counts as recent (servers update)."""
    parts: list[int] = []
    for piece in version.split("-", 1)[0].split("."):
        if not piece.isdigit():
            return True
        parts.append(int(piece))
    return tuple(parts) >= wanted if parts else True
