"""Tool calls written in the answer's text (issue 6, rung 3 of the ladder), and the text
protocol that describes the tools in the prompt for models the server cannot give tools to.

Small models often write the call instead of emitting it: `<tool_call>{…}</tool_call>` (Qwen,
Hermes templates), a fenced ```json block, bare JSON, `[TOOL_CALLS][…]` (Mistral),
`<|python_tag|>{…}` (Llama 3.x), with `parameters` instead of `arguments` and names such as
`functions.bash`. We read them only when the reply has no native call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.repair import parse_arguments

BADGE_TEXT_TAG = "from text: <tool_call>"
BADGE_TEXT_FENCE = "from text: fenced JSON"
BADGE_TEXT_BARE = "from text: bare JSON"

_TAGGED = re.compile(
    r"<tool_call>\s*(?P<body>.*?)\s*(?:</tool_call>|$)"
    r"|<function_call>\s*(?P<body2>.*?)\s*(?:</function_call>|$)"
    r"|\[TOOL_CALLS\]\s*(?P<body3>\[.*\]|\{.*\})"
    r"|<\|python_tag\|>\s*(?P<body4>\{.*\})",
    re.DOTALL,
)
_FENCE = re.compile(
    r"```[ \t]*(?:json|JSON|tool_call|tool_code)?[ \t]*\n(?P<body>.*?)\n?```", re.DOTALL
)
_NAME_PREFIXES = ("functions.", "function.", "tools.", "tool.")


@dataclass(frozen=True)
class TextCall:
    """One call found in the text: the name as written, the arguments, the raw block."""

    name: str
    arguments: Any  # a dict, or the raw string to be repaired like native arguments
    raw: str
    badge: str


@dataclass(frozen=True)
class TextCalls:
    calls: list[TextCall]
    remaining: str  # the text with the call blocks taken out


def clean_tool_name(name: str) -> str:
    name = name.strip().strip("`'\"")
    for prefix in _NAME_PREFIXES:
        if name.lower().startswith(prefix):
            return name[len(prefix) :]
    return name


_NAME_FIELD = re.compile(r'"(?:name|tool)"\s*:\s*"([^"]+)"')


def _calls_in(body: str, *, tagged: bool = False) -> list[tuple[str, Any]] | None:
    """The (name, arguments) pairs a JSON block holds, or None when it is not call-shaped.

    A tagged block whose JSON is broken (cut off at the token limit, say) still names its
    tool: the call is kept with its raw text as arguments, so the model is told the JSON was
    broken rather than nothing. A truncated call is never completed by guessing.
    """
    parsed = parse_arguments(body) if body.lstrip().startswith("{") else None
    value: Any = parsed.arguments if parsed else None
    if value is None:
        try:
            value = json.loads(body, strict=False)
        except ValueError:
            named = _NAME_FIELD.search(body) if tagged else None
            return [(clean_tool_name(named.group(1)), body)] if named else None
    items = value if isinstance(value, list) else [value]
    found: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):
            return None
        if isinstance(item.get("function"), dict):  # {"type": "function", "function": {...}}
            item = item["function"]
        name = item.get("name") or item.get("tool") or item.get("tool_name")
        if not isinstance(name, str) or not name.strip():
            return None
        arguments = next(
            (item[k] for k in ("arguments", "parameters", "args", "input") if k in item), {}
        )
        found.append((clean_tool_name(name), arguments))
    return found or None


def extract_text_calls(text: str, is_declared: Callable[[str], bool]) -> TextCalls:
    """Find tool calls written in `text`.

    Tagged and fenced blocks count when they are call-shaped (a name and arguments), declared
    or not: an undeclared name then gets a tool result with the closest name, which teaches
    the model more than silence. Bare JSON counts only when it names a declared tool: an
    answer may legitimately show JSON.
    """
    calls: list[TextCall] = []
    spans: list[tuple[int, int]] = []
    for match in _TAGGED.finditer(text):
        body = next(g for g in match.group("body", "body2", "body3", "body4") if g is not None)
        found = _calls_in(body, tagged=True)
        if found:
            calls += [TextCall(n, a, match.group(0), BADGE_TEXT_TAG) for n, a in found]
            spans.append(match.span())
    if not calls:
        for match in _FENCE.finditer(text):
            found = _calls_in(match.group("body"))
            if found:
                calls += [TextCall(n, a, match.group(0), BADGE_TEXT_FENCE) for n, a in found]
                spans.append(match.span())
    if not calls:
        stripped = text.strip()
        start, end = stripped.find("{"), stripped.rfind("}")
        candidates = [stripped]
        if stripped.startswith("[") and stripped.endswith("]"):
            candidates = [stripped]
        elif 0 <= start < end:
            candidates.append(stripped[start : end + 1])
        for candidate in candidates:
            found = _calls_in(candidate)
            if found and all(is_declared(name) for name, _ in found):
                calls = [TextCall(n, a, candidate, BADGE_TEXT_BARE) for n, a in found]
                at = text.find(candidate)
                spans.append((at, at + len(candidate)))
                break
    remaining = text
    for begin, finish in sorted(spans, reverse=True):
        remaining = remaining[:begin] + remaining[finish:]
    return TextCalls(calls, remaining.strip())


# -- the text protocol: tools described in the prompt, results sent as user messages --------

TEXT_PROTOCOL_INTRO = """\

# Tools
You can use the tools below. To call a tool, write exactly one block like this and stop:
<tool_call>
{{"name": "<tool name>", "arguments": {{<the arguments as JSON>}}}}
</tool_call>
Example: <tool_call>{{"name": "{example}", "arguments": {example_args}}}</tool_call>
The result comes back in a <tool_response> block. Call one tool at a time.

Available tools:
"""


def describe_tools_for_prompt(schemas: list[dict[str, Any]]) -> str:
    """The tools as text, appended to the system prompt in text mode."""
    if not schemas:
        return ""
    first = schemas[0]["function"]
    example_args = {key: "..." for key in first.get("parameters", {}).get("required", [])[:1]} or {}
    lines = [
        TEXT_PROTOCOL_INTRO.format(example=first["name"], example_args=json.dumps(example_args))
    ]
    for schema in schemas:
        function = schema["function"]
        params = json.dumps(function.get("parameters", {}), ensure_ascii=False)
        lines.append(f"## {function['name']}\n{function['description']}\nParameters: {params}\n")
    return "\n".join(lines)


def to_text_protocol(messages: list[dict[str, Any]], tools_text: str) -> list[dict[str, Any]]:
    """The history as a model without native tools reads it: calls written as <tool_call>
    blocks in the assistant's text, results as user messages in <tool_response> blocks."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message["role"]
        if role == "system":
            out.append({"role": "system", "content": (message.get("content") or "") + tools_text})
        elif role == "assistant" and message.get("tool_calls"):
            blocks = [
                "<tool_call>\n"
                + json.dumps(
                    {
                        "name": call["function"]["name"],
                        "arguments": _loads_or_raw(call["function"]["arguments"]),
                    },
                    ensure_ascii=False,
                )
                + "\n</tool_call>"
                for call in message["tool_calls"]
            ]
            text = "\n".join(filter(None, [message.get("content") or "", *blocks]))
            out.append({"role": "assistant", "content": text})
        elif role == "tool":
            block = f"<tool_response>\n{message.get('content', '')}\n</tool_response>"
            if out and out[-1]["role"] == "user" and out[-1].get("_results"):
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block, "_results": True})
        else:
            out.append({k: v for k, v in message.items() if k in ("role", "content")})
    for message in out:
        message.pop("_results", None)
    return out


def _loads_or_raw(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except (TypeError, ValueError):
        return arguments
