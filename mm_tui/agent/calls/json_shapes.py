"""Calls written as JSON, in every shape models use, wherever they stand in the text: inside
wrapper tags or tokens, in a fenced block, or bare in prose.

Shapes: `name` (or `tool`, `tool_name`, `function` as a string) beside `arguments`/`parameters`/
`args`/`input`/`params`; `{"function": {…}}`; `{"tool_calls": […]}`; the tool name as the only
key; the arguments flattened beside the name; a list of any of these. Several values in a row
(with or without commas, `;`-separated, one per line) are several calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mm_tui.agent.calls.jsonish import Span, close_json, loads_lenient, scan_value, values_in
from mm_tui.agent.calls.model import (
    BADGE_TEXT_BARE,
    BADGE_TEXT_FENCE,
    BADGE_TEXT_TAG,
    BARE,
    FENCED,
    MARKED,
    Found,
    IsKnown,
    RawCall,
)

_NAME_KEYS = ("name", "tool", "tool_name", "function_name", "function", "recipient_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "params", "tool_input")
_IGNORED_KEYS = {"type", "id", "index", "call_id"}
_NAME_FIELD = re.compile(r'"(?:name|tool|tool_name)"\s*:\s*"([^"]+)"')

#: Openers after which JSON calls follow, and the closers that may end the block.
_WRAPPERS = re.compile(
    r"<tool_call>|<tool_calls>|<function_call>|<tools>|<tool>|<response>|<\|tool_call\|>"
    r"|<\|python_tag\|>|\[TOOL_CALLS\]|functools(?=\s*\[)|<\|tool_calls\|>"
    r"|(?P<token><\|[a-z][a-z_]{0,30}\|>)(?=\s*[\[{])"  # any of the model's tokens before JSON
)
#: The chain of tokens (and short header words) before such a token, taken out with the call:
#: `<|action_start|><|plugin|>`, `<|message_sep|>function call<|role_sep|>`. Looked for in a
#: bounded window, so a flood of tokens stays linear.
_TOKEN_CHAIN = re.compile(
    r"(?:<\|[a-z][a-z_]{0,30}\|>[ \t\r\n]*(?:[A-Za-z][\w .=:-]{0,38}?[ \t\r\n]*)?)+\Z"
)
_CLOSERS = re.compile(
    r"\s*(?:</tool_call>|</tool_calls>|</function_call>|</tools>|</tool>|</response>"
    r"|\[/TOOL_CALLS\]|<\|/tool_call\|>|<\|eom_id\|>|<\|eot_id\|>)"
)
_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w+-]*)[ \t]*\n(?P<body>.*?)\n?[ \t]*```", re.DOTALL)
_CALL_FENCES = {"", "json", "json5", "tool_call", "tool_code", "python", "py", "javascript"}


def calls_from_value(value: Any, depth: int = 0) -> list[RawCall] | None:
    """The calls a JSON value holds, or None when it is not call-shaped."""
    if depth > 4:
        return None
    if isinstance(value, list):
        found: list[RawCall] = []
        for item in value:
            calls = calls_from_value(item, depth + 1)
            if not calls:
                return None
            found += calls
        return found or None
    if not isinstance(value, dict) or not value:
        return None
    if isinstance(value.get("tool_calls"), list):
        return calls_from_value(value["tool_calls"], depth + 1)
    inner = value.get("function")
    if isinstance(inner, dict):
        return calls_from_value(inner, depth + 1)
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if isinstance(name, str) and name.strip():
        key = next((k for k in _ARGUMENT_KEYS if k in value), None)
        if key is not None:
            return [RawCall(name, _arguments(value[key]))]
        rest = {k: v for k, v in value.items() if k not in _IGNORED_KEYS and k not in _NAME_KEYS}
        return [RawCall(name, rest, needs_declared=True)]
    if len(value) == 1:  # {"get_weather": {"city": "Paris"}}
        [(key, arguments)] = value.items()
        if isinstance(arguments, dict):
            return [RawCall(key, arguments, needs_declared=True)]
    return None


def _arguments(value: Any) -> Any:
    """A dict as is; a JSON string holding an object decoded; anything else kept raw."""
    if value is None:
        return {}
    if isinstance(value, str):
        decoded = loads_lenient(value) if value.strip()[:1] in "{[" else None
        return decoded if isinstance(decoded, dict) else value
    return value


def _calls_in_block(text: str, start: int, end: int) -> tuple[list[RawCall], int, bool]:
    """The calls of every JSON value in text[start:end] (a wrapper's body): (calls, where the
    last value ended, whether one was cut inside a string)."""
    calls: list[RawCall] = []
    last = start
    cut = False
    for span, value in values_in(text, start, end):
        if span.start < last:
            continue  # inside a value already read
        if span.start > last and text[last : span.start].strip(" \t\r\n;,") and calls:
            break  # prose after the calls: the block is over
        if value is None and span.in_string:
            named = _NAME_FIELD.search(text, span.start, span.end)
            if named:
                calls.append(RawCall(named.group(1), text[span.start : span.end]))
                cut = True
            last = span.end
            break
        found = calls_from_value(value) if value is not None else None
        if found and not span.closed and arguments_cut(text[span.start : span.end]):
            body = text[span.start : span.end]  # the reply ended inside the arguments
            calls += [RawCall(call.name, body, call.needs_declared) for call in found]
            cut, last = True, span.end
            break
        if found is None and value is None and span.closed:
            named = _NAME_FIELD.search(text, span.start, span.end)
            if named:  # broken beyond repair, but it names its tool: the model hears why
                found = [RawCall(named.group(1), _raw_arguments(text[span.start : span.end]))]
        if not found:
            break
        calls += found
        last = span.end
    return calls, last, cut


_ARGUMENTS_OPEN = re.compile(
    r'"(?:arguments|parameters|args|input|params|tool_input)"\s*:\s*(?=[{\[])'
)


def arguments_cut(body: str) -> bool:
    """Whether a call object the reply ended inside (`body`, not closed) was cut inside its
    arguments: their object or array opened and never closed. Such a call is never completed
    (closing `{"path": "a` or `{` to `{}` would run it with arguments the model never gave);
    a call whose arguments closed and only its outer braces are missing is repaired."""
    opened = list(_ARGUMENTS_OPEN.finditer(body))
    return bool(opened) and not scan_value(body, opened[-1].end()).closed


def _raw_arguments(body: str) -> str:
    """The arguments part of a broken call object, as raw text for the error the model reads."""
    match = re.search(r'"(?:arguments|parameters|args|input)"\s*:\s*', body)
    if not match:
        return body
    rest = body[match.end() :].rstrip()
    return rest[:-1].rstrip() if rest.endswith("}") else rest


def find_tagged(text: str, masked: str) -> list[Found]:
    """JSON after the model's own markers: `<tool_call>`, `<|python_tag|>`, `[TOOL_CALLS]`,
    `functools`, `<|tool_call|>`, `<tools>`, … A literal closing tag inside a JSON string
    does not end the block: the JSON is read by its own grammar."""
    found: list[Found] = []
    openers = list(_WRAPPERS.finditer(masked))
    for number, match in enumerate(openers):
        limit = openers[number + 1].start() if number + 1 < len(openers) else len(text)
        begin = match.end()
        close = re.compile(r"</tool_call>|</tools>|</response>|</tool>|</function_call>")
        calls, last, cut = _calls_in_block(text, begin, limit)
        if not calls:
            continue
        first = _VALUE_START.search(text, begin, last)
        start = match.start()
        if match.group("token"):
            window = max(start - 160, 0)
            chain = _TOKEN_CHAIN.search(text, window, start)
            start = chain.start() if chain else start
        if first and text[begin : first.start()].strip():  # `<tool_call>Sure: {…}`: the
            start = first.start()  # words stay the person's; the opener goes as a leftover
        # a name alone between the model's own markers is a call without arguments, for any
        # name: an undeclared one is answered as such, so the model can try again
        calls = [RawCall(c.name, c.arguments) if c.arguments == {} else c for c in calls]
        closer = _CLOSERS.match(text, last)
        end = closer.end() if closer else last
        if not closer and not cut:
            after = close.search(text, last, limit)
            if after and not text[last : after.start()].strip():
                end = after.end()
        found.append(Found(start, end, calls, BADGE_TEXT_TAG, MARKED, cut))
    return found


_VALUE_START = re.compile(r"[{\[]")
_SEMICOLON = re.compile(r"[ \t]*;")
_CALL_TAIL = re.compile(r"\s*\)\s*\]?")


def find_fenced(text: str, masked: str) -> list[Found]:
    """Call-shaped JSON inside a ```json (or unlabelled) fenced block."""
    found: list[Found] = []
    for match in _FENCE.finditer(masked):
        if match.group("lang").lower() not in _CALL_FENCES:
            continue
        body_start, body_end = match.span("body")
        calls, last, cut = _calls_in_block(text, body_start, body_end)
        if calls and not text[last:body_end].strip():
            found.append(Found(match.start(), match.end(), calls, BADGE_TEXT_FENCE, FENCED, cut))
    return found


def find_bare(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    """Call-shaped JSON standing in prose (`{…}; {…}` or one per line are several calls). It
    counts only when it names a declared tool (checked by the policy): an answer may
    legitimately show JSON. Broken JSON that names a declared tool beside its arguments is
    kept, so the model hears that its JSON was broken, unless a whole call stands inside it."""
    found: list[Found] = []
    consumed = 0
    values = values_in(masked, 0, len(masked))
    for index, (span, value) in enumerate(values):
        if span.start < consumed:
            continue
        body = text[span.start : span.end]
        cut = False
        if span.closed:
            value = loads_lenient(body)
        elif not span.in_string:
            closed = close_json(body)
            value = loads_lenient(closed) if closed else None
            cut = value is not None and arguments_cut(body)
        calls = calls_from_value(value) if value is not None else None
        if calls and cut:  # the reply ended inside the arguments: said as cut, never run
            calls = [RawCall(call.name, body, call.needs_declared) for call in calls]
        if calls is None and value is None and not span.in_string:
            if _whole_call_inside(values, index):
                continue  # `{"name": "x", "parameters": {{"name": "x", …}}`: the whole one counts
            named = _NAME_FIELD.search(body)
            if (
                named
                and is_known(named.group(1))
                and re.search(r'"(?:arguments|parameters)"', body)
            ):
                calls = [RawCall(named.group(1), _raw_arguments(body), needs_declared=True)]
        if calls:
            end = span.end
            separator = _SEMICOLON.match(text, end)
            end = separator.end() if separator else end
            found.append(Found(span.start, end, calls, BADGE_TEXT_BARE, BARE, cut))
            consumed = span.end
            continue
        named_call = _named_json(text, span, is_known)
        if named_call is not None:
            found.append(named_call)
            consumed = named_call.end
    return found


def _whole_call_inside(values: list[tuple[Span, Any]], index: int) -> bool:
    """Whether a readable call-shaped value lies inside the unreadable value at `index`."""
    outer = values[index][0]
    for inner, value in values[index + 1 :]:
        if inner.start >= outer.end:
            return False
        if value is not None and calls_from_value(value):
            return True
    return False


_NAME_BEFORE = re.compile(r"(?:\[Calling tool:\s*)?([A-Za-z_][\w.-]*)\s*(\(\s*)?$")


def _named_json(text: str, span: Span, is_known: IsKnown) -> Found | None:
    """`get_weather\\n{…}` (GLM-4-0414) or `name({…})` / `[Calling tool: name({…})]`: a
    declared name right before a JSON object of arguments."""
    before = text[max(span.start - 200, 0) : span.start]
    match = _NAME_BEFORE.search(before.rstrip(" \t\n") if not before.endswith("(") else before)
    if match is None or not span.closed:
        return None
    name = match.group(1)
    if not is_known(name):
        return None
    arguments = loads_lenient(text[span.start : span.end])
    if not isinstance(arguments, dict):
        return None
    start = span.start - (len(before) - match.start())
    end = span.end
    tail = _CALL_TAIL.match(text, end) if "(" in match.group(0) else None
    if tail:
        end = tail.end()
    badge = BADGE_TEXT_TAG if "Calling tool" in match.group(0) else BADGE_TEXT_BARE
    strength = MARKED if "Calling tool" in match.group(0) else BARE
    return Found(start, end, [RawCall(name, arguments, needs_declared=True)], badge, strength)


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
