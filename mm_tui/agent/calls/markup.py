"""Calls written as XML-like markup: Qwen3-Coder's `<function=name>` with
`<parameter=key>` (or a JSON body), Anthropic-style `<invoke name=…><parameter name=…>`
(MiniMax) and the same with a prefix on every tag (DeepSeek V3.2's `<｜DSML｜invoke …>`),
`<function name=…>` with `<param name=…>` children (MiniCPM5) or a JSON body, GLM's
`<tool_call>name<arg_key>…</arg_key><arg_value>…</arg_value>`, and a tag named after a declared
tool with one child tag per argument. Wrappers such as `<tool_call>`, `<minimax:tool_call>`,
`<｜DSML｜function_calls>` are taken out with the call. Closing tags may be missing: a value
then ends at the next tag. A `<![CDATA[…]]>` value is taken verbatim, tags inside it included.

A parameter's value is text (framing newlines and padding dropped); a value that is a JSON
object or array is read as one. Numbers stay text: the markup carries no types, except where it
says so (`string="false"`: the value is JSON).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from mm_tui.agent.calls.jsonish import loads_lenient
from mm_tui.agent.calls.model import (
    BADGE_TEXT_INVOKE,
    BADGE_TEXT_XML,
    MARKED,
    Found,
    IsKnown,
    RawCall,
)

#: A prefix some models put on every tag name: `minimax:`, `｜DSML｜`, `seed:`.
_PREFIX = r"[^\s<>=/\"']{0,24}?"
_WRAPPERS = r"(?:tool_call|tool_calls|function_calls|tools)"
_WRAP_OPEN = re.compile(rf"(?:\s*<{_PREFIX}{_WRAPPERS}>\s*)+$")
_WRAP_CLOSE = re.compile(rf"(?:\s*</{_PREFIX}{_WRAPPERS}>)+")

_QWEN = re.compile(
    r"<function=(?P<name>[^>\s]+)>(?P<body>.*?)"
    r"(?:</function>|(?=</tool_call>)|(?=<function[=\s])|$)",
    re.DOTALL,
)
_QWEN_PARAMETER = re.compile(
    r"<parameter=(?P<key>[^>\s]+)>(?P<value>.*?)"
    r"(?:</parameter>|(?=<parameter=)|(?=</function>)|(?=</tool_call>)|$)",
    re.DOTALL,
)
_INVOKE = re.compile(
    rf"<(?P<prefix>{_PREFIX})(?P<tag>invoke|function)\s+name=[\"'](?P<name>[^\"']+)[\"']\s*>"
    r"(?P<body>.*?)(?:</(?P=prefix)(?P=tag)>|(?=<(?P=prefix)invoke\s)|(?=</minimax:tool_call>)|$)",
    re.DOTALL,
)
_CDATA_OPEN, _CDATA_CLOSE = "<![CDATA[", "]]>"


@functools.lru_cache(maxsize=16)
def _named_parameter(prefix: str) -> re.Pattern[str]:
    """`<parameter name="k" …>v</parameter>` (or `<param …>`) with the invoke's tag prefix."""
    tag = rf"{re.escape(prefix)}(?:parameter|param)"
    return re.compile(
        rf"<{tag}\s+name=[\"'](?P<key>[^\"']+)[\"'](?P<attributes>[^>]*)>(?P<value>.*?)"
        rf"(?:</{tag}>|(?=<{tag}\s)|$)",
        re.DOTALL,
    )


_CHILD = re.compile(r"<(?P<key>[A-Za-z_][\w-]*)>(?P<value>.*?)</(?P=key)>", re.DOTALL)
_GLM = re.compile(r"<tool_call>(?P<body>.*?)(?:</tool_call>|(?=<tool_call>)|$)", re.DOTALL)
_GLM_PAIR = re.compile(
    r"<arg_key>(?P<key>[^<]*)</arg_key>\s*<arg_value>(?P<value>.*?)"
    r"(?:</arg_value>|(?=<arg_key>)|(?=</tool_call>)|$)",
    re.DOTALL,
)
_OPENER = re.compile(r"<([A-Za-z_][\w-]*)>")
_BARE_NAME = re.compile(r"\s*([A-Za-z_][\w.-]*)\s*$")


def value_of(raw: str, attributes: str = "") -> Any:
    """A parameter value: framing newlines and padding dropped; a CDATA section verbatim; JSON
    when it is an object or an array, or when the markup says it is no string
    (`string="false"`); text otherwise."""
    value = raw.strip()
    if value.startswith(_CDATA_OPEN) and value.endswith(_CDATA_CLOSE):
        return value[len(_CDATA_OPEN) : -len(_CDATA_CLOSE)]
    if re.search(r"\bstring=[\"']false[\"']", attributes):
        typed = loads_lenient(value)
        return value if typed is None and value != "null" else typed
    if value[:1] in "[{":
        parsed = loads_lenient(value)
        if isinstance(parsed, dict | list):
            return parsed
    return value


def _widen(text: str, start: int, end: int) -> tuple[int, int]:
    """The span with the wrapper tags right around it."""
    window = max(start - 240, 0)  # wrappers are short: a bounded look back keeps it linear
    opening = _WRAP_OPEN.search(text[window:start])
    closing = _WRAP_CLOSE.match(text, end)
    return (window + opening.start() if opening else start), (closing.end() if closing else end)


def find_qwen(text: str, masked: str) -> list[Found]:
    found: list[Found] = []
    for match in _QWEN.finditer(masked):
        body = text[match.start("body") : match.end("body")]
        parameters = list(_QWEN_PARAMETER.finditer(body))
        if parameters:
            arguments: Any = {p.group("key"): value_of(p.group("value")) for p in parameters}
        else:
            stripped = body.strip()
            closed = match.group(0).endswith("</function>")
            arguments = loads_lenient(stripped) if stripped else ({} if closed else None)
            if not isinstance(arguments, dict):
                if not stripped and _ends_on_opener(text, match):
                    found.append(_cut_after_opener(text, match, BADGE_TEXT_XML))
                continue  # `<function=bash>` mentioned in prose
        start, end = _widen(text, match.start(), match.end())
        found.append(
            Found(start, end, [RawCall(match.group("name"), arguments)], BADGE_TEXT_XML, MARKED)
        )
    return found


def _blank_cdata(text: str) -> str:
    """`text` with the inside of each CDATA section blanked (same length), so no tag inside
    one is read as markup. Linear: an unclosed section ends the search."""
    pieces: list[str] = []
    at = 0
    while (start := text.find(_CDATA_OPEN, at)) >= 0:
        end = text.find(_CDATA_CLOSE, start + len(_CDATA_OPEN))
        if end < 0:
            break
        inside = start + len(_CDATA_OPEN)
        pieces += [text[at:inside], " " * (end - inside)]
        at = end
    return "".join([*pieces, text[at:]])


_ONLY_BLANKS = re.compile(r"\s*\Z")


def _ends_on_opener(text: str, match: re.Match[str]) -> bool:
    """Whether the reply ended right after a call's opener that starts its line or follows
    the model's own tokens or tags (not a tag named in the middle of a sentence)."""
    if not _ONLY_BLANKS.match(text, match.end()):  # a match, not a copy of the rest: linear
        return False
    before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()].rstrip()
    return not before or before.endswith(">")


def _cut_after_opener(text: str, match: re.Match[str], badge: str) -> Found:
    """A call whose opener is the last thing the reply wrote: named, cut before its
    arguments; said as cut, never run."""
    start, end = _widen(text, match.start(), match.end())
    call = RawCall(match.group("name"), text[match.start() : end].strip())
    return Found(start, end, [call], badge, MARKED, cut=True)


def find_invoke(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    """`<invoke name="x">` / `<function name="x">` (any tag prefix) with named parameters,
    child tags, or a JSON body."""
    found: list[Found] = []
    masked = _blank_cdata(masked) if _CDATA_OPEN in masked else masked
    for match in _INVOKE.finditer(masked):
        body = text[match.start("body") : match.end("body")]
        masked_body = masked[match.start("body") : match.end("body")]
        parameters = list(_named_parameter(match.group("prefix")).finditer(masked_body))
        arguments: Any
        if parameters:
            arguments = {
                p.group("key"): value_of(body[p.start("value") : p.end("value")], p["attributes"])
                for p in parameters
            }
        elif body.strip()[:1] == "{":
            arguments = loads_lenient(body.strip())
            arguments = body.strip() if arguments is None else arguments
        else:
            arguments = {c.group("key"): value_of(c.group("value")) for c in _CHILD.finditer(body)}
            closed = match.group(0).endswith(f"</{match['prefix']}{match['tag']}>")
            if not arguments and (body.strip() or not closed):
                if not closed and not body.strip() and _ends_on_opener(text, match):
                    found.append(_cut_after_opener(text, match, BADGE_TEXT_INVOKE))
                continue  # `<invoke name="bash">` mentioned in prose
        start, end = _widen(text, match.start(), match.end())
        calls = [RawCall(match.group("name"), arguments)]
        found.append(Found(start, end, calls, BADGE_TEXT_INVOKE, MARKED))
    return found


def find_glm(text: str, masked: str) -> list[Found]:
    """`<tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value>…</tool_call>`, and
    `<tool_call>name</tool_call>` for a call without arguments."""
    found: list[Found] = []
    for match in _GLM.finditer(masked):
        body = text[match.start("body") : match.end("body")]
        first = body.find("<arg_key>")
        if first >= 0:
            name = body[:first].strip()
            pairs = {
                p.group("key").strip(): value_of(p.group("value")) for p in _GLM_PAIR.finditer(body)
            }
        else:
            bare = _BARE_NAME.fullmatch(body)
            if bare is None or not match.group(0).endswith("</tool_call>"):
                continue  # a bare name counts only when its </tool_call> closes it
            name, pairs = bare.group(1), {}
        if not name or "<" in name or "{" in name:
            continue
        start, end = _widen(text, match.start(), match.end())
        found.append(Found(start, end, [RawCall(name, pairs)], BADGE_TEXT_XML, MARKED))
    return found


def find_tool_tags(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    """`<bash><command>ls</command></bash>`: a declared tool's name as the tag, one child tag
    per argument (the style Cline and Roo Code prompt for). Linear: each tag's next closer is
    looked for once, not once per opener."""
    found: list[Found] = []
    next_closer: dict[str, int] = {}
    consumed = 0
    for opener in _OPENER.finditer(masked):
        name = opener.group(1)
        if opener.start() < consumed or not is_known(name):
            continue
        closer = next_closer.get(name, -2)
        if closer != -1 and closer < opener.end():
            closer = masked.find(f"</{name}>", opener.end())
            next_closer[name] = closer
        if closer < 0:
            continue
        body = text[opener.end() : closer]
        children = {c.group("key"): value_of(c.group("value")) for c in _CHILD.finditer(body)}
        if not children and body.strip():
            continue
        end = closer + len(name) + 3
        found.append(Found(opener.start(), end, [RawCall(name, children)], BADGE_TEXT_XML, MARKED))
        consumed = end
    return found
