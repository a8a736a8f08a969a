"""Tool calls written in the answer's text (issue 6, rung 3 of the ladder), and the text
protocol that describes the tools in the prompt for models the server cannot give tools to.

Small models often write the call instead of emitting it: `<tool_call>{…}</tool_call>` (Qwen,
Hermes templates), a fenced ```json block, bare JSON, `[TOOL_CALLS][…]` (Mistral),
`<|python_tag|>{…}` (Llama 3.x), with `parameters` instead of `arguments` and names such as
`functions.bash`. We read them only when the reply has no native call.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.repair import parse_arguments

BADGE_TEXT_TAG = "from text: <tool_call>"
BADGE_TEXT_XML = "from text: <function=…> markup"
BADGE_TEXT_PYTHONIC = "from text: pythonic call"
BADGE_TEXT_FENCE = "from text: fenced JSON"
BADGE_TEXT_BARE = "from text: bare JSON"

_NAME_PREFIXES = ("functions.", "function.", "tools.", "tool.")
_NAME_FIELD = re.compile(r'"(?:name|tool)"\s*:\s*"([^"]+)"')
_OPENING_TAGS = re.compile(r"<tool_call>|<function_call>|<\|python_tag\|>|\[TOOL_CALLS\]")
_CLOSING_TAG = re.compile(r"\s*(?:</tool_call>|</function_call>|<\|eom_id\|>|<\|eot_id\|>)?")
_QWEN_FUNCTION = re.compile(
    r"(?:<tool_call>\s*)?<function=(?P<name>[^>\s]+)>(?P<body>.*?)"
    r"(?:</function>\s*(?:</tool_call>)?|</tool_call>|(?=<function=)|$)",
    re.DOTALL,
)
_QWEN_PARAMETER = re.compile(
    r"<parameter=(?P<key>[^>\s]+)>(?P<value>.*?)(?=</parameter>|<parameter=|</function>|</tool_call>|$)",
    re.DOTALL,
)
_GEMMA4_CALL = re.compile(
    r"<\|tool_call>\s*call:(?P<name>[\w.-]+)(?P<body>\{.*?\})\s*<tool_call\|>", re.DOTALL
)
_GEMMA4_STRING = re.compile(r'<\|"\|>(.*?)<\|"\|>', re.DOTALL)
_PYTHONIC_TOKENS = re.compile(
    r"<\|tool_call_start\|>(?P<body>.*?)(?:<\|tool_call_end\|>|$)", re.DOTALL
)
_FENCE = re.compile(
    r"```[ \t]*(?P<lang>json|JSON|tool_call|tool_code|python)?[ \t]*\n(?P<body>.*?)\n?```",
    re.DOTALL,
)


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


def close_json(text: str) -> str | None:
    """`text` with its missing closing brackets added, when it stops between values.

    A model that stopped by itself after forgetting the last `}` meant the call; a call cut
    inside a string (at the token limit, say) is never completed by guessing.
    """
    stack: list[str] = []
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]" and (not stack or stack.pop() != char):
            return None
    if in_string or not stack:
        return None
    return text + "".join(reversed(stack))


def _json_value(body: str) -> Any:
    """A JSON value read leniently (repairs of repair.py, then missing closers), or None."""
    body = body.strip()
    if body.startswith("{"):
        parsed = parse_arguments(body)
        if parsed.arguments is not None:
            return parsed.arguments
    try:
        return json.loads(body, strict=False)
    except ValueError:
        closed = close_json(body)
        if closed is None:
            return None
        try:
            return json.loads(closed, strict=False)
        except ValueError:
            return None


def _calls_in(body: str, *, tagged: bool = False) -> list[tuple[str, Any]] | None:
    """The (name, arguments) pairs a JSON block holds, or None when it is not call-shaped.

    A tagged block whose JSON is broken beyond repair still names its tool: the call is kept
    with its raw text as arguments, so the model is told the JSON was broken.
    """
    value = _json_value(body)
    if value is None:
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


def _pythonic_calls(body: str) -> list[tuple[str, Any]] | None:
    """`[bash(command='ls')]` or `bash(command="ls")` (Gemma 3 tool_code, LFM2), or None."""
    try:
        tree = ast.parse(body.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError):
        return None
    items = tree.elts if isinstance(tree, ast.List | ast.Tuple) else [tree]
    found: list[tuple[str, Any]] = []
    for item in items:
        if not isinstance(item, ast.Call) or item.args:
            return None
        name = ast.unparse(item.func)
        try:
            arguments = {kw.arg: ast.literal_eval(kw.value) for kw in item.keywords if kw.arg}
        except (ValueError, SyntaxError, RecursionError):
            return None
        found.append((clean_tool_name(name), arguments))
    return found or None


def _qwen_value(value: str) -> Any:
    """A Qwen3-Coder parameter value: framing newlines and padding dropped; JSON when it is."""
    value = value.strip()
    if value[:1] in "[{":
        parsed = _json_value(value)
        if parsed is not None:
            return parsed
    return value


def _find_tagged_json(text: str) -> list[tuple[TextCall, tuple[int, int]]]:
    """`<tool_call>{…}</tool_call>` and its cousins. The JSON is read by its own grammar, so
    a literal `</tool_call>` inside an argument does not end the block."""
    found: list[tuple[TextCall, tuple[int, int]]] = []
    decoder = json.JSONDecoder(strict=False)
    for match in _OPENING_TAGS.finditer(text):
        begin = match.end()
        rest = text[begin:]
        offset = len(rest) - len(rest.lstrip())
        name_prefix = re.match(r"([\w.-]+)(?=\s*[{\[])", rest[offset:])  # [TOOL_CALLS]name{…}
        if name_prefix and match.group(0) == "[TOOL_CALLS]":
            offset += name_prefix.end()
            offset += len(rest[offset:]) - len(rest[offset:].lstrip())
        try:
            value, length = decoder.raw_decode(rest, offset)
            body = rest[offset:length]
            end = begin + length
        except ValueError:
            closing = re.search(r"</tool_call>|</function_call>", rest)
            body = rest[offset : closing.start() if closing else len(rest)]
            end = begin + (closing.start() if closing else len(rest))
            value = None
        end += _CLOSING_TAG.match(text, end).end() - end  # type: ignore[union-attr]
        if name_prefix and match.group(0) == "[TOOL_CALLS]":
            arguments = value if isinstance(value, dict) else body
            calls = [(clean_tool_name(name_prefix.group(1)), arguments)]
        else:
            calls = _calls_in(body, tagged=True) if value is None else _calls_in(json.dumps(value))
        raw = text[match.start() : end]
        for name, arguments in calls or []:
            found.append((TextCall(name, arguments, raw, BADGE_TEXT_TAG), (match.start(), end)))
    return found


def _find_qwen_xml(text: str) -> list[tuple[TextCall, tuple[int, int]]]:
    found = []
    for match in _QWEN_FUNCTION.finditer(text):
        arguments = {
            p.group("key"): _qwen_value(p.group("value"))
            for p in _QWEN_PARAMETER.finditer(match.group("body"))
        }
        call = TextCall(
            clean_tool_name(match.group("name")), arguments, match.group(0), BADGE_TEXT_XML
        )
        found.append((call, match.span()))
    return found


def _find_gemma4(text: str) -> list[tuple[TextCall, tuple[int, int]]]:
    found = []
    for match in _GEMMA4_CALL.finditer(text):
        body = _GEMMA4_STRING.sub(lambda m: json.dumps(m.group(1)), match.group("body"))
        body = re.sub(r"([{,]\s*)([A-Za-z_][\w-]*)\s*:", r'\1"\2":', body)  # bare keys
        arguments: Any = _json_value(body)
        call = TextCall(
            clean_tool_name(match.group("name")),
            arguments if isinstance(arguments, dict) else match.group("body"),
            match.group(0),
            BADGE_TEXT_TAG,
        )
        found.append((call, match.span()))
    return found


def _find_pythonic_tokens(text: str) -> list[tuple[TextCall, tuple[int, int]]]:
    found = []
    for match in _PYTHONIC_TOKENS.finditer(text):
        for name, arguments in _pythonic_calls(match.group("body")) or []:
            found.append(
                (TextCall(name, arguments, match.group(0), BADGE_TEXT_PYTHONIC), match.span())
            )
    return found


def _find_fenced(text: str) -> list[tuple[TextCall, tuple[int, int]]]:
    found = []
    for match in _FENCE.finditer(text):
        body = match.group("body")
        calls = _calls_in(body)
        badge = BADGE_TEXT_FENCE
        if not calls and match.group("lang") in ("tool_code", "python", None):
            calls, badge = _pythonic_calls(body), BADGE_TEXT_PYTHONIC
        for name, arguments in calls or []:
            found.append((TextCall(name, arguments, match.group(0), badge), match.span()))
    return found


_RECOGNISERS = (
    _find_tagged_json,
    _find_qwen_xml,
    _find_gemma4,
    _find_pythonic_tokens,
    _find_fenced,
)


def extract_text_calls(text: str, is_declared: Callable[[str], bool]) -> TextCalls:
    """Find tool calls written in `text`.

    Tagged, marked-up and fenced blocks count when they are call-shaped, declared or not: an
    undeclared name then gets a tool result with the closest name, which teaches the model
    more than silence. Bare JSON counts only when it names a declared tool: an answer may
    legitimately show JSON.
    """
    found: list[tuple[TextCall, tuple[int, int]]] = []
    for recognise in _RECOGNISERS:
        found = recognise(text)
        if found:
            break
    if not found:
        found = _find_bare(text, is_declared)
    remaining = text
    for begin, finish in sorted({span for _, span in found}, reverse=True):
        remaining = remaining[:begin] + remaining[finish:]
    return TextCalls([call for call, _ in found], remaining.strip())


def _find_bare(
    text: str, is_declared: Callable[[str], bool]
) -> list[tuple[TextCall, tuple[int, int]]]:
    stripped = text.strip()
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i >= 0), default=-1)
    candidates = [stripped] + ([stripped[start:]] if start > 0 else [])
    for candidate in candidates:
        calls = _calls_in(candidate)
        if calls and all(is_declared(name) for name, _ in calls):
            at = text.find(candidate)
            span = (at, at + len(candidate))
            return [(TextCall(n, a, candidate, BADGE_TEXT_BARE), span) for n, a in calls]
    return []


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
