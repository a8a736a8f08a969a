"""How much of a prompt the server reused from its cache, from its own counts.

Every request begins with the one before byte for byte (`tests/agent/test_reusable_prefix.py`),
so a server with a prompt cache reads only what is new. Servers say how much they reused:
- OpenAI's shape, `usage.prompt_tokens_details.cached_tokens` (vLLM with
  `--enable-prompt-tokens-details`, newer llama-server builds);
- llama-server's `timings`: `cache_n` tokens reused, `prompt_n` tokens read anew.
Ollama and LM Studio say nothing: then nothing is shown rather than a guess.
"""

from __future__ import annotations

from typing import Any


def _count(value: Any) -> int | None:
    """A token count as servers write it: a non-negative int (not a bool)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def reuse_of(chunk: dict[str, Any]) -> tuple[int, int] | None:
    """(tokens reused, tokens of the whole prompt) from one chunk, or None when it says not."""
    usage = chunk.get("usage")
    if isinstance(usage, dict):
        details = usage.get("prompt_tokens_details")
        cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
        prompt = _count(usage.get("prompt_tokens"))
        if cached is not None and prompt:
            return min(cached, prompt), prompt
    timings = chunk.get("timings")
    if isinstance(timings, dict):
        cached, fresh = _count(timings.get("cache_n")), _count(timings.get("prompt_n"))
        if cached is not None and fresh is not None and cached + fresh > 0:
            return cached, cached + fresh
    return None


def reuse_percent(reuse: tuple[int, int] | None) -> int | None:
    """`92` for 920 of 1000 tokens reused; None when the server did not say."""
    if reuse is None or reuse[1] <= 0:
        return None
    return round(100 * reuse[0] / reuse[1])
