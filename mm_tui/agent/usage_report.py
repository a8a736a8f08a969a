"""The token counts a server reports in `usage` (and llama-server's `timings`), read defensively.

A server may send anything there: strings, negatives, NaN, 1e308, nested objects, null. A value
that is not a plain count is ignored (and logged), never an `internal error`.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: No context holds a billion tokens: a count above this is garbage, not a count.
MAX_TOKENS = 1_000_000_000


@dataclass(frozen=True)
class ReportedUsage:
    """One call's counts. `prompt` is the server's `prompt_tokens`; `cached` the part of the
    prompt it says came from its cache (None when it does not say)."""

    prompt: int
    completion: int
    cached: int | None = None


def _field(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None)
        value = extra.get(name) if isinstance(extra, dict) else None
    return value


def token_count(value: object, name: str) -> int | None:
    """`value` as a count of tokens, or None (logged) when it is not one."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        log.debug("usage: %s is not a number (%.80r): ignored", name, value)
        return None
    if isinstance(value, float) and (not math.isfinite(value) or value != int(value)):
        log.debug("usage: %s is not a whole number (%r): ignored", name, value)
        return None
    if not 0 <= value <= MAX_TOKENS:
        log.debug("usage: %s is out of range (%.80r): ignored", name, value)
        return None
    return int(value)


def read_usage(usage: Any) -> ReportedUsage | None:
    """The counts of a chunk's `usage`, or None when its prompt count is missing or garbage."""
    if not usage:
        return None
    prompt = token_count(_field(usage, "prompt_tokens"), "prompt_tokens")
    if prompt is None:
        return None
    completion = token_count(_field(usage, "completion_tokens"), "completion_tokens") or 0
    details = _field(usage, "prompt_tokens_details")
    cached = token_count(_field(details, "cached_tokens"), "cached_tokens") if details else None
    return ReportedUsage(prompt, completion, cached)


def timings_prompt(timings: Any) -> int | None:
    """llama-server's `timings`: `cache_n` tokens reused from its cache plus `prompt_n`
    evaluated make the whole prompt (tools/server: `result_timings::to_json`). None when
    either is missing or garbage."""
    if not isinstance(timings, dict):
        return None
    cache = token_count(timings.get("cache_n"), "timings.cache_n")
    evaluated = token_count(timings.get("prompt_n"), "timings.prompt_n")
    return None if cache is None or evaluated is None else cache + evaluated


def whole_prompt(reported: ReportedUsage, from_timings: int | None) -> int | None:
    """The size of the whole prompt, cached part included, when the server's numbers say it;
    None when `prompt_tokens` may exclude a cached prefix and nothing says how much.

    How servers count (read in their sources):
    - llama-server: `prompt_tokens` is the whole prompt, with
      `prompt_tokens_details.cached_tokens` (`usage_json_oaicompat`), and `timings` gives
      `cache_n` + `prompt_n`;
    - vLLM (`entrypoints/openai/protocol.py` `UsageInfo`) and mlx-lm's `server.py` (recent):
      the whole prompt, `cached_tokens` the part served from the cache;
    - Ollama (`openai/openai.go`): `prompt_tokens` is `PromptEvalCount`, only what it had to
      evaluate — 0 when all was cached (its own TODO says so), with no cached count;
    - a `cached_tokens` larger than `prompt_tokens` means the count left the cache out.
    """
    if from_timings is not None:
        return from_timings
    cached = reported.cached
    if cached is None:
        return None
    return reported.prompt + cached if cached > reported.prompt else reported.prompt
