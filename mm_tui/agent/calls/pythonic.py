"""Calls written as Python function calls: `[get_weather(city="Paris")]` between
LFM2's `<|tool_call_start|>` tokens, after Llama's `<|python_tag|>`, one a line inside Olmo 3's
`<function_calls>`, in Gemma 3's ```tool_code fence, standing alone on a line for a declared tool, or as a bracketed list of declared tools
anywhere in prose (Llama 4: `Here's a tool call: [get_weather(location='Paris')] and …`).
Models do not always write valid Python: JSON literals (`true`, `null`) and raw newlines inside
strings are accepted. A list the reply ended inside is kept as cut: it never runs.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from typing import Any

from mm_tui.agent.calls.jsonish import scan_value
from mm_tui.agent.calls.model import (
    BADGE_TEXT_PYTHONIC,
    BARE,
    FENCED,
    MARKED,
    Found,
    IsKnown,
    RawCall,
)

log = logging.getLogger(__name__)

_TOKENS = re.compile(
    r"<\|(?:tool_call_start|python_start)\|>(?P<body>.*?)(?:<\|(?:tool_call_end|python_end)\|>|$)"
    r"|<function_calls>(?P<olmo>.*?)(?:</function_calls>|$)",  # Olmo 3: one call a line
    re.DOTALL,
)
_PYTHON_TAG = re.compile(
    r"<\|python_tag\|>(?P<body>[^{\[].*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)", re.DOTALL
)
_FENCE = re.compile(
    r"```[ \t]*(?:tool_code|python|py)?[ \t]*\n(?P<body>.*?)\n?[ \t]*```", re.DOTALL
)
_STANDALONE = re.compile(r"(?m)^[ \t]*\[?[ \t]*(?P<name>[A-Za-z_][\w.]*)\((?P<rest>.*)$")
_BRACKETED = re.compile(r"\[[ \t]*(?P<name>[A-Za-z_][\w.]*)[ \t]*\(")
#: Bracketed lists that never close, read to the end: past this many, the rest is not tried
#: (each read may run to the end of the text; this keeps a flood of `[f(` linear).
_MAX_UNCLOSED = 4
_LITERALS = {"true": "True", "false": "False", "null": "None"}


def _python_source(body: str) -> str:
    """JSON literals as Python outside strings, raw newlines inside strings escaped."""
    out: list[str] = []
    quote = ""
    i = 0
    while i < len(body):
        char = body[i]
        if quote:
            if char == "\\" and i + 1 < len(body):
                out.append(body[i : i + 2])
                i += 2
                continue
            if char == quote:
                quote = ""
            out.append("\\n" if char == "\n" else char)
            i += 1
            continue
        if char in "\"'":
            quote = char
            out.append(char)
            i += 1
            continue
        word = re.match(r"[A-Za-z_]\w*", body[i:])
        if word:
            out.append(_LITERALS.get(word.group(0), word.group(0)))
            i += word.end()
            continue
        out.append(char)
        i += 1
    return "".join(out)


def parse_calls(body: str) -> list[RawCall] | None:
    """The calls of `[f(a=1), g(b="x")]` or `f(a=1)`, or None when it is not only calls."""
    source = body.strip()
    if not source or len(source) > 200_000:
        return None
    python = _python_source(source)
    items = _parsed(python)
    if items is None:  # a quote inside its own string, bare or over-escaped (`\\'`)
        for candidate in (_requoted(source), re.sub(r"\\\\(['\"])", r"\\\1", source)):
            if candidate and candidate != source:
                python = _python_source(candidate)
                items = _parsed(python)
                if items is not None:
                    break
    if items is None:
        return None
    calls: list[RawCall] = []
    for item in items:
        if not isinstance(item, ast.Call) or item.args:
            return None
        name = ast.unparse(item.func)
        try:
            arguments: Any = {kw.arg: ast.literal_eval(kw.value) for kw in item.keywords if kw.arg}
            json.dumps(arguments, allow_nan=False)  # bytes, sets, 1e999: no JSON value
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError):
            log.debug("a pythonic argument is no JSON value", exc_info=True)
            arguments = ast.get_source_segment(python, item) or name  # the model hears why
        calls.append(RawCall(name, arguments))
    return calls or None


def _parsed(python: str) -> list[ast.expr] | None:
    """The expressions of `[f(…), g(…)]`, `f(…)` or one call a line; None if not Python."""
    try:
        tree = ast.parse(python, mode="eval").body
        return list(tree.elts) if isinstance(tree, ast.List | ast.Tuple) else [tree]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        items = _one_call_a_line(python)
        if items is None:
            log.debug("not a pythonic call", exc_info=True)
        return items


#: Where a keyword argument's string opens: `(command='` or `, path="`.
_KEYWORD_STRING = re.compile(r"[(,]\s*[A-Za-z_]\w*\s*=\s*(['\"])")
#: What may follow the quote that really ends a keyword's string: the next keyword, or the
#: call's closing parenthesis at the end of the call (or of the list, or before the next call).
_STRING_END = r"(?=\s*(?:,\s*[A-Za-z_]\w*\s*=|\)\s*(?:[\]),;]|,?\s*[A-Za-z_][\w.]*\(|$)))"


def _requoted(source: str) -> str | None:
    """`bash(command='echo 'hi'')`: a string holding its own quote unescaped. Each keyword's
    string ends at the first of its quotes followed by the next keyword or the call's end;
    the quotes inside are escaped. None when nothing changed (no such string)."""
    out: list[str] = []
    at = 0
    changed = False
    while (opened := _KEYWORD_STRING.search(source, at)) is not None:
        quote = opened.group(1)
        inner_start = opened.end()
        close = re.compile(rf"(?<!\\){re.escape(quote)}{_STRING_END}").search(source, inner_start)
        if close is None:
            return None
        inner = source[inner_start : close.start()]
        escaped = re.sub(rf"(?<!\\)({re.escape(quote)})", r"\\\1", inner)
        changed = changed or escaped != inner
        out += [source[at:inner_start], escaped, quote]
        at = close.end()
    out.append(source[at:])
    return "".join(out) if changed else None


def _one_call_a_line(python: str) -> list[ast.expr] | None:
    """`f(a=1)\ng()`: several calls, one a statement (Olmo 3), or None."""
    try:
        module = ast.parse(python, mode="exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not module.body or not all(isinstance(s, ast.Expr) for s in module.body):
        return None
    return [s.value for s in module.body if isinstance(s, ast.Expr)]


def _broken_call(body: str) -> list[RawCall] | None:
    """A marked block that starts like a call but does not parse: kept with its raw text, so
    the model hears that its call was broken."""
    match = re.match(r"\s*\[?\s*([A-Za-z_][\w.]*)\(", body)
    return [RawCall(match.group(1), body.strip())] if match else None


def find_pythonic(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    found: list[Found] = []
    for pattern, strength in ((_TOKENS, MARKED), (_PYTHON_TAG, MARKED), (_FENCE, FENCED)):
        for match in pattern.finditer(masked):
            group = "olmo" if match.groupdict().get("olmo") is not None else "body"
            body = text[match.start(group) : match.end(group)]
            calls = parse_calls(body) or (_broken_call(body) if strength == MARKED else None)
            if calls:
                found.append(
                    Found(match.start(), match.end(), calls, BADGE_TEXT_PYTHONIC, strength)
                )
    found += _bracketed(text, masked, is_known)
    for match in _STANDALONE.finditer(masked):
        if not is_known(match.group("name")):
            continue
        line_end = masked.find("\n", match.start())
        end = len(masked) if line_end < 0 else line_end
        calls = parse_calls(text[match.start() : end])
        if calls:
            needs = [RawCall(c.name, c.arguments, needs_declared=True) for c in calls]
            found.append(Found(match.start(), end, needs, BADGE_TEXT_PYTHONIC, BARE))
    return found


def _bracketed(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    """`[name(…), other(…)]` in prose, naming declared tools; a list the reply ended inside is
    kept as cut (never run, never completed)."""
    found: list[Found] = []
    consumed = unclosed = 0
    for match in _BRACKETED.finditer(masked):
        if match.start() < consumed or not is_known(match.group("name")):
            continue
        if unclosed >= _MAX_UNCLOSED:
            break  # every read from here on could run to the end: stop reading
        span = scan_value(masked, match.start(), python=True)
        if not span.closed:
            unclosed += 1
            last = masked.rfind("]", match.start())
            calls = parse_calls(text[match.start() : last + 1]) if last > 0 else None
            if calls:  # a quote inside a string threw the scan off; the list reads whole
                needs = [RawCall(c.name, c.arguments, needs_declared=True) for c in calls]
                found.append(Found(match.start(), last + 1, needs, BADGE_TEXT_PYTHONIC, BARE))
                consumed = last + 1
                continue
            if span.end < len(masked):
                continue  # a stray closer, not the end of the reply: no call
            raw = [RawCall(match.group("name"), text[match.start() :], needs_declared=True)]
            found.append(Found(match.start(), span.end, raw, BADGE_TEXT_PYTHONIC, BARE, True))
            continue
        calls = parse_calls(text[span.start : span.end])
        if calls:
            needs = [RawCall(c.name, c.arguments, needs_declared=True) for c in calls]
            found.append(Found(span.start, span.end, needs, BADGE_TEXT_PYTHONIC, BARE))
            consumed = span.end
    return found
