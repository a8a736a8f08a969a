"""Tolerant reading of tool-call arguments written by a weak model (rung 2 of the call ladder).

Each successful repair is named by a short badge, shown on the tool row.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.calls.native_repair import clean_keys

log = logging.getLogger(__name__)

BADGE_NATIVE = ""
BADGE_REPAIRED = "repaired JSON"
BADGE_OBJECT = "arguments as object"
BADGE_NAME = "tool name fixed"

_FENCE = re.compile(r"^\s*```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?\s*```\s*$", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


@dataclass(frozen=True)
class ParsedArguments:
    """Arguments as a dict (or None when unreadable), the badge of the repair, or the error."""

    arguments: dict[str, Any] | None
    badge: str = BADGE_NATIVE
    error: str = ""


BADGE_SCHEMA = "arguments fitted to the schema"
#: The error of arguments nested past what the reader follows (no RecursionError).
NESTED_TOO_DEEPLY = "nested too deeply"


def parse_arguments(raw: Any, schema: dict[str, Any] | None = None) -> ParsedArguments:
    """Read the arguments of a tool call, repairing what a small model commonly breaks; with
    the tool's JSON `schema`, a JSON string where an array or object is expected is decoded
    (`{"edits": "[{…}]"}`)."""
    parsed = _parse(raw)
    if schema is None or parsed.arguments is None:
        return parsed
    fitted = fit_to_schema(parsed.arguments, schema)
    if fitted is parsed.arguments:
        return parsed
    badge = ", ".join(b for b in (parsed.badge, BADGE_SCHEMA) if b)
    return ParsedArguments(fitted, badge)


def fit_to_schema(arguments: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    """`arguments` with each string value decoded where the schema wants an array or object
    and the string holds one; the same dict when nothing needed it."""
    from mm_tui.agent.calls.jsonish import loads_lenient

    properties = schema.get("properties") or {}
    fitted: dict[str, Any] | None = None
    for key, value in arguments.items():
        wanted = (properties.get(key) or {}).get("type")
        if not isinstance(value, str) or wanted not in ("array", "object"):
            continue
        decoded = loads_lenient(value) if value.strip()[:1] in "[{" else None
        if isinstance(decoded, list if wanted == "array" else dict):
            fitted = {**(fitted or arguments), key: decoded}
    return fitted if fitted is not None else arguments


def _parse(raw: Any) -> ParsedArguments:
    if isinstance(raw, dict):
        return ParsedArguments(raw, BADGE_OBJECT)
    if raw is None or not str(raw).strip():
        return ParsedArguments({})  # SPEC §3: empty arguments mean {}
    text = str(raw)
    try:
        value = json.loads(text)
    except RecursionError:
        return ParsedArguments(None, error=NESTED_TOO_DEEPLY)
    except ValueError as exc:
        first_error = str(exc)
    else:
        if isinstance(value, dict):
            cleaned = clean_keys(value)
            return ParsedArguments(cleaned, BADGE_REPAIRED if cleaned is not value else "")
        if isinstance(value, str):  # double-encoded: "{\"command\": \"ls\"}"
            inner = parse_arguments(value)
            if inner.arguments is not None:
                return ParsedArguments(inner.arguments, BADGE_REPAIRED)
        return ParsedArguments(None, error=f"expected a JSON object, got {type(value).__name__}")
    repaired = _repair(text)
    if repaired is None:  # escapes outside strings, over-escaped or inner quotes
        from mm_tui.agent.calls.jsonish import loads_lenient

        lenient = loads_lenient(text)
        repaired = lenient if isinstance(lenient, dict) else None
    if repaired is not None:
        return ParsedArguments(clean_keys(repaired), BADGE_REPAIRED)
    return ParsedArguments(None, error=first_error)


def _repair(text: str) -> dict[str, Any] | None:
    candidate = text.strip()
    fenced = _FENCE.match(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    start, end = candidate.find("{"), candidate.rfind("}")
    if start == -1 or end <= start:
        return None
    candidate = candidate[start : end + 1]
    for attempt in (candidate, _TRAILING_COMMA.sub(r"\1", candidate)):
        try:
            value = json.loads(attempt, strict=False)  # strict=False: raw newlines in strings
        except (ValueError, RecursionError):
            pass
        else:
            if isinstance(value, dict):
                return value
    try:  # Python-style dicts: single quotes, True/False/None
        value = ast.literal_eval(_TRAILING_COMMA.sub(r"\1", candidate))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        log.debug("arguments are not a Python literal either", exc_info=True)
        return None
    return value if isinstance(value, dict) else None
