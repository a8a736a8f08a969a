"""What every call reader returns, the badges a person sees on the row, and the tool-name rules
shared by all of them."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BADGE_TEXT_TAG = "from text: <tool_call>"
BADGE_TEXT_XML = "from text: <function=…> markup"
BADGE_TEXT_INVOKE = "from text: <invoke> markup"
BADGE_TEXT_TOKENS = "from text: special tokens"
BADGE_TEXT_PYTHONIC = "from text: pythonic call"
BADGE_TEXT_FENCE = "from text: fenced JSON"
BADGE_TEXT_BARE = "from text: bare JSON"
BADGE_REASONING = "from reasoning"

#: How sure a reader is that the model meant a call: the model's own call markers (tags,
#: special tokens, markup) > a fenced block > JSON or a name standing in prose.
MARKED, FENCED, BARE = 2, 1, 0

IsKnown = Callable[[str], bool]


@dataclass(frozen=True)
class RawCall:
    """One call as a reader found it: the name as written and the arguments (a dict, or the
    raw text when it could not be read, so the model hears that its JSON was broken)."""

    name: str
    arguments: Any
    #: The shape only makes sense for a declared tool (flattened arguments, the tool name as
    #: the key, a name line followed by JSON): ignored unless the name is declared.
    needs_declared: bool = False


@dataclass(frozen=True)
class Found:
    """A span of text that holds calls, with the reader's badge and strength."""

    start: int
    end: int
    calls: list[RawCall]
    badge: str
    strength: int
    #: The call was cut (the reply stopped inside it): never completed, never run.
    cut: bool = False


@dataclass(frozen=True)
class TextCall:
    """One call found in the text: the name, the arguments, the raw block and the badge."""

    name: str
    arguments: Any  # a dict, or the raw string to be repaired like native arguments
    raw: str
    badge: str
    #: Why this call must not run (a reply cut inside it); empty when it may.
    not_run: str = ""


@dataclass(frozen=True)
class TextCalls:
    calls: list[TextCall]
    remaining: str  # the text with the call blocks taken out
    notes: list[str] = field(default_factory=list)


_PREFIXES = ("functions.", "function.", "tools.", "tool.", "default_api.")
_COUNTER = re.compile(r":\d+$")  # Kimi's functions.name:0
_PLACEHOLDER = re.compile(
    r"^(?:\.{2,}|…|<[^>]*>|\{[^}]*\}|\[[^\]]*\]|"
    r"(?:example_)?(?:tool|function|func)_?name|name|tool|function|your_tool|my_tool|"
    r"the_function_to_call|example_function_name|string)$",
    re.IGNORECASE,
)


def clean_tool_name(name: str, is_known: IsKnown | None = None) -> str:
    """The name a model meant: quotes and prefixes such as `functions.` dropped, Kimi's `:0`
    counter dropped, and gpt-oss's `json` glued to the name dropped when that is declared."""
    name = name.strip().strip("`'\"").strip()
    for prefix in _PREFIXES:
        if name.lower().startswith(prefix):
            name = name[len(prefix) :]
            break
    name = _COUNTER.sub("", name)
    if is_known is not None and not is_known(name):
        for suffix in ("json", "<|constrain|>json"):
            if name.endswith(suffix) and is_known(name[: -len(suffix)]):
                return name[: -len(suffix)]
    return name


def is_placeholder(name: str) -> bool:
    """`...`, `<name>`, `tool_name`: what a template or an explanation writes, never a tool."""
    stripped = name.strip()
    return not stripped or bool(_PLACEHOLDER.match(stripped)) or "..." in stripped
