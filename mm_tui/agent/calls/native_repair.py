"""Mending a call the server did parse: a name with control tokens or markup leaked
into it (`query_dataset<|channel|>commentary`, `tool_12</arg_value>`, GLM's
`read<arg_key>filePath</arg_key><arg_value>/x</arg_value>` with the arguments inside the name),
argument keys with markup (`"path</arg_key>"`), and arguments that are not quite JSON (escapes
outside strings, over-escaped or unescaped quotes; see `jsonish.loads_lenient`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.calls.jsonish import loads_lenient
from mm_tui.agent.calls.markup import value_of
from mm_tui.agent.calls.model import IsKnown, clean_tool_name

_NAME_THEN_NOISE = re.compile(
    r"^\s*(?P<name>[A-Za-z_][\w.:-]*?)\s*(?P<rest>(?:<|\[|\{|\s).*)$", re.DOTALL
)
_PAIR = re.compile(
    r"(?:<arg_key>|<tool_call>|<parameter=)?\s*(?P<key>[^<>=\s][^<>]*?)\s*(?:</arg_key>|>)\s*"
    r"<arg_value>(?P<value>.*?)(?:</arg_value>|$)",
    re.DOTALL,
)
_KEY_MARKUP = re.compile(r"</?(?:arg_key|arg_value|parameter|tool_call)>|<\|[^|]*\|>")


@dataclass(frozen=True)
class MendedCall:
    name: str
    arguments: str  # JSON text
    raw: str  # what the model wrote, for the row's `v`


def clean_keys(arguments: dict[str, Any]) -> dict[str, Any]:
    """Argument keys without leaked markup: `{"path</arg_key>": "/x"}` → `{"path": "/x"}`."""
    if not any(_KEY_MARKUP.search(key) for key in arguments):
        return arguments
    return {_KEY_MARKUP.sub("", key).strip(): value for key, value in arguments.items()}


def mend_native_call(name: str, arguments: str, is_known: IsKnown) -> MendedCall | None:
    """The call with its name mended, or None when the name is fine or cannot be mended to a
    declared tool (the unknown-tool answer then names the closest one)."""
    if is_known(name):
        return None
    cleaned = clean_tool_name(name, is_known)
    extra: dict[str, Any] = {}
    if not is_known(cleaned):
        match = _NAME_THEN_NOISE.match(name)
        if match is None:
            return None
        cleaned = clean_tool_name(match.group("name"), is_known)
        if not is_known(cleaned):
            return None
        extra = {
            pair.group("key").strip(): value_of(pair.group("value"))
            for pair in _PAIR.finditer(match.group("rest"))
        }
    parsed = loads_lenient(arguments) if arguments.strip() else {}
    merged: Any = parsed if isinstance(parsed, dict) else {}
    if extra:
        merged = {**extra, **merged}
    if not isinstance(parsed, dict) and not extra and arguments.strip():
        return MendedCall(cleaned, arguments, name)  # the arguments stay for their own error
    raw = name if not arguments.strip() or arguments.strip() == "{}" else f"{name} {arguments}"
    return MendedCall(cleaned, json.dumps(merged, ensure_ascii=False), raw)
