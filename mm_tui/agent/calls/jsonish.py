"""JSON as models write it: found anywhere in text, read leniently, never completed when cut
inside a string.

Every scanner here is iterative and linear; anything recursive (the json and ast modules) runs
under a guard, so a hostile reply (huge, or nested ten thousand deep) is a plain failure, never
a RecursionError.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

MAX_LENIENT = 200_000  # characters; past this only strict JSON is tried
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_JSON_ESCAPES = set('"\\/bfnrtu')
_PARSE_ERRORS = (ValueError, SyntaxError, RecursionError, MemoryError, TypeError)


@dataclass(frozen=True)
class Span:
    """A bracketed value in text: [start, end), whether it closed, and whether the text ended
    inside one of its strings (a cut that must never be completed)."""

    start: int
    end: int
    closed: bool
    in_string: bool
    depth: int = 0  # the deepest nesting seen


MAX_DEPTH = 100  # nesting past this is nobody's tool call: a plain failure, read no further


def _scan(
    text: str, start: int, limit: int | None = None, *, python: bool = False
) -> tuple[Span, list[str]]:
    """The one bracket walk of the reader: the extent of the value opening at `start` and the
    closers still owed where the walk stopped. JSON reads `"…"` strings and `{}`/`[]`; Python
    (`python=True`) also reads `'…'` strings and `()`."""
    openers = "{[(" if python else "{["
    quotes = "\"'" if python else '"'
    stack: list[str] = []
    quote = ""
    escaped = False
    end = len(text) if limit is None else min(limit, len(text))
    deepest = 0
    i = start
    while i < end:
        char = text[i]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in quotes:
            quote = char
        elif char in openers:
            stack.append(_CLOSER_OF[char])
            deepest = max(deepest, len(stack))
        elif char in "}])" and (python or char != ")"):
            if not stack or stack[-1] != char:
                return Span(start, i, False, False, deepest), stack  # a stray closer: stop
            stack.pop()
            if not stack:
                return Span(start, i + 1, True, False, deepest), stack
        i += 1
    return Span(start, end, False, bool(quote), deepest), stack


_CLOSER_OF = {"{": "}", "[": "]", "(": ")"}


def scan_value(text: str, start: int, limit: int | None = None, *, python: bool = False) -> Span:
    """The extent of the `{…}` or `[…]` opening at `start` (see `_scan`)."""
    return _scan(text, start, limit, python=python)[0]


def close_json(text: str) -> str | None:
    """`text` with its missing closers added, when it stops between values; None when it is
    cut inside a string (never completed by guessing) or has nothing to close."""
    span, stack = _scan(text, 0)
    if span.closed or span.in_string or span.end != len(text) or span.depth > MAX_DEPTH:
        return None
    if not stack:
        return None
    body = text.rstrip()
    if body.endswith((":", ",")) and not body.endswith(("{", "[")):
        body = body.rstrip(":,").rstrip()
        if body.endswith(":") or body.endswith('"') and body.count('"') % 2:
            return None
    return body + "".join(reversed(stack))


def loads(text: str) -> Any:
    """Strict JSON, or None; never raises (RecursionError included)."""
    try:
        return json.loads(text, strict=False)
    except _PARSE_ERRORS:
        return None


def loads_lenient(text: str) -> Any:
    """A JSON value read with the repairs small models need, or None.

    In order: strict JSON; trailing commas; Python literals (single quotes, True/None);
    backslashes outside strings and invalid escapes inside them; unescaped inner quotes.
    """
    text = text.strip()
    value = loads(text)
    if value is not None or text == "null" or len(text) > MAX_LENIENT:
        return value
    if text[:1] in "{[" and scan_value(text, 0).depth > MAX_DEPTH:
        return None
    candidates = [_TRAILING_COMMA.sub(r"\1", text)]
    if '\\"' in text:  # over-escaped: {"query": \\"foo\\"}
        unescaped = re.sub(r'\\+"', '"', candidates[0])
        if loads(unescaped) is not None:
            return loads(unescaped)
    candidates.append(fix_escapes(candidates[0]))
    candidates.append(fix_inner_quotes(candidates[1]))
    for candidate in candidates:
        value = loads(candidate)
        if value is not None:
            return value
    if text.startswith("{{"):
        value = _undoubled(text)
        if value is not None:
            return value
    try:
        return ast.literal_eval(candidates[0])
    except _PARSE_ERRORS:
        log.debug("not a Python literal either", exc_info=True)
        return None


def _undoubled(text: str) -> Any:
    """A value written with doubled braces, as a template's escaping leaks them
    (`{{"name": "x", "arguments": {"a": 1}}}`, or every brace doubled): the outer pair
    undoubled, else every `{{`/`}}` halved; only an object counts."""
    stripped = text.rstrip()
    tries = []
    if stripped.endswith("}}"):
        tries.append(stripped[1:-1])
    tries.append(stripped.replace("{{", "{").replace("}}", "}"))
    for candidate in tries:
        value = loads(_TRAILING_COMMA.sub(r"\1", candidate))
        if isinstance(value, dict):
            return value
    return None


def fix_escapes(text: str) -> str:
    """Backslashes outside strings dropped (`\\n` between values, `\\"` around them), and an
    invalid escape inside a string kept as a literal backslash (`C:\\Users`)."""
    out: list[str] = []
    in_string = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            nxt = text[i + 1] if i + 1 < len(text) else ""
            if not in_string:
                if nxt == "n" or nxt == "t" or nxt == "r":
                    out.append(" ")
                    i += 2
                    continue
                i += 1  # an over-escaped quote or a stray backslash between values
                continue
            if nxt in _JSON_ESCAPES:
                out.append(char + nxt)
                i += 2
                continue
            out.append("\\\\")
            i += 1
            continue
        if char == '"':
            in_string = not in_string
        out.append(char)
        i += 1
    return "".join(out)


def fix_inner_quotes(text: str) -> str:
    """A `"` inside a value string that is not followed by `,` `:` `}` `]` (or the end) is
    taken as part of the string and escaped: `"env.get("KEY", "d")"` keeps its quotes. A `,`
    after it ends the string only when a key (`"k":`) or the end of the object follows."""
    out: list[str] = []
    in_string = escaped = is_value = False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                rest = text[i + 1 :].lstrip()
                inner = bool(rest) and rest[0] not in ",:}]"
                if is_value and rest[:1] == ",":
                    inner = re.match(r',\s*(?:"[^"\n]*"\s*:|[}\]])', rest) is None
                if inner and is_value:
                    out.append('\\"')
                    continue
                in_string = False
        elif char == '"':
            in_string = True
            before = "".join(out).rstrip()
            is_value = before.endswith(":")
        out.append(char)
    return "".join(out)


def values_in(
    text: str, start: int = 0, end: int | None = None, max_tries: int = 400
) -> list[tuple[Span, Any]]:
    """Every JSON object or array in text[start:end], left to right, with its value (None when
    unreadable; the span still says how far it reaches). Values inside values are not listed."""
    found: list[tuple[Span, Any]] = []
    stop = len(text) if end is None else end
    i = start
    tries = 0
    if stop - start > 20_000:
        max_tries = min(max_tries, 20)  # each try may read to the end: keep it linear-ish
    while i < stop and tries < max_tries:
        j = _next_opener(text, i, stop)
        if j < 0:
            break
        span = scan_value(text, j, stop)
        if span.depth > MAX_DEPTH:
            found.append((span, None))
            i = max(span.end, j + 1)  # neither parsed nor searched inside
            continue
        body = text[span.start : span.end]
        value = loads_lenient(body) if span.closed else None
        if value is None and not span.closed and not span.in_string:
            closed = close_json(body)
            value = loads_lenient(closed) if closed else None
        if value is not None:
            found.append((span, value))
            i = span.end if span.end > j else j + 1
            continue
        tries += 1  # only an unreadable value costs a rescan of its inside
        found.append((span, None))  # unreadable: reported (a cut, or broken JSON that may
        if span.in_string and span.end >= stop:  # still name its tool), and its inside is read
            break
        i = j + 1
    return found


def _next_opener(text: str, i: int, stop: int) -> int:
    brace, bracket = text.find("{", i, stop), text.find("[", i, stop)
    candidates = [p for p in (brace, bracket) if p >= 0]
    return min(candidates) if candidates else -1
