"""Calls written in a model's own special tokens that reached the text because the server did
not parse them: gpt-oss's harmony channels (`to=functions.x … <|message|>{…}`), Kimi's
`<|tool_calls_section_begin|>` families, DeepSeek's `<｜tool▁call▁begin｜>` tokens (full-width
or ASCII bars), Gemma 4's `<|tool_call>call:name{…}` with missing or different closers, and
Mistral's `[TOOL_CALLS]name[ARGS]{…}` / `[TOOL_CALLS]name{…}`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mm_tui.agent.calls.jsonish import MAX_DEPTH, close_json, loads_lenient, scan_value
from mm_tui.agent.calls.model import (
    BADGE_TEXT_TAG,
    BADGE_TEXT_TOKENS,
    BARE,
    MARKED,
    Found,
    IsKnown,
    RawCall,
)

# -- harmony (gpt-oss) --------------------------------------------------------------------------
_HARMONY = re.compile(
    r"(?:<\|start\|>)?(?:assistant)?[ \t]*(?:<\|channel\|>[ \t]*\w+[ \t]*)?"
    r"to=(?:functions\.)?(?P<name>[\w.-]+)[^<\n]*?(?:[ \t]*<\|channel\|>[ \t]*\w+)?"
    r"(?:[ \t]*<\|constrain\|>[ \t]*\w+)?[ \t]*<\|message\|>",
)
_HARMONY_END = re.compile(r"<\|call\|>|<\|end\|>|<\|return\|>")
#: Harmony's own segments that are not for the person: analysis, and the control tokens.
HARMONY_NOISE = re.compile(
    r"<\|channel\|>\s*analysis\s*<\|message\|>.*?(?:<\|end\|>|$)|<\|start\|>\s*assistant"
    r"|<\|channel\|>\s*final\s*<\|message\|>|<\|(?:end|return|call)\|>",
    re.DOTALL,
)

# -- Kimi K2 -------------------------------------------------------------------------------------
_KIMI_SECTION = re.compile(
    r"<\|tool_calls?_section_begin\|>(?P<body>.*?)(?:<\|tool_calls?_section_end\|>|$)", re.DOTALL
)
_KIMI_CALL = re.compile(
    r"<\|tool_call_begin\|>\s*(?P<id>[^<]+?)\s*<\|tool_call_argument_begin\|>\s*(?P<args>.*?)\s*"
    r"(?:<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|$)",
    re.DOTALL,
)

_KIMI_LOOSE = re.compile(  # a call whose section (and begin) tokens were lost
    r"(?:<\|tool_call_begin\|>\s*)?(?<![\w.-])(?P<id>(?:functions\.)?[A-Za-z_][\w.-]*:\d+)\s*"
    r"<\|tool_call_argument_begin\|>\s*(?P<args>.*?)\s*(?:<\|tool_call_end\|>|(?=<\|tool_call_begin\|>)|$)",
    re.DOTALL,
)

# -- DeepSeek ------------------------------------------------------------------------------------
_BAR = r"[|｜]"
_SEP = r"[▁_ ]"
_DS_CALLS = re.compile(
    rf"<{_BAR}tool{_SEP}calls{_SEP}begin{_BAR}>(?P<body>.*?)(?:<{_BAR}tool{_SEP}calls{_SEP}end{_BAR}>|$)",
    re.DOTALL,
)
_DS_CALL = re.compile(
    rf"<{_BAR}tool{_SEP}call{_SEP}begin{_BAR}>(?P<body>.*?)(?:<{_BAR}tool{_SEP}call{_SEP}end{_BAR}>|$)",
    re.DOTALL,
)
_DS_SEP = re.compile(rf"<{_BAR}tool{_SEP}sep{_BAR}>")
DEEPSEEK_NOISE = re.compile(rf"<{_BAR}end{_SEP}of{_SEP}sentence{_BAR}>")

# -- Gemma 4 -------------------------------------------------------------------------------------
#: Gemma 4's `<|tool_call>call:name{…}` and FunctionGemma's `<start_function_call>call:name{…}`;
#: without either opener (a server that stripped special tokens) only for a declared name.
_GEMMA = re.compile(
    r"(?P<opener><\|tool_call>|<start_function_call>)?\s*:?\s*(?<![\w.-])call:(?P<name>[\w.-]+)\s*"
    r"(?=\{)|(?P<fragment><call>)\s*(?P<fragment_name>[\w.-]+)\s*(?=\{)"
)
_GEMMA_QUOTE = '<|"|>'
_GEMMA_QUOTES = (_GEMMA_QUOTE, "<escape>")  # Gemma 4, FunctionGemma: a string's delimiter
_GEMMA_CLOSER = re.compile(
    r"\s*(?:<tool_call\|>|</tool_call>|<\|tool_call\|>|<end_of_turn>|<end_function_call>)"
)

# -- Mistral / Devstral / Ministral --------------------------------------------------------------
_MISTRAL = re.compile(
    r"\[TOOL_CALLS\]\s*(?P<name>[A-Za-z_][\w.-]*)\s*(?:\[CALL_ID\]\s*[\w-]*\s*)?(?:\[ARGS\])?\s*(?=\{)"
)


def _json_at(text: str, start: int, limit: int) -> tuple[Any, int, bool]:
    """(value, end, cut) of the JSON object starting at `start` (lenient, missing closers
    completed unless cut inside a string)."""
    at = text.find("{", start, limit)
    if at < 0 or text[start:at].strip():
        rest = text[start:limit].strip()
        return ({} if not rest else None), start, False
    span = scan_value(text, at, limit)
    body = text[at : span.end]
    if span.depth > MAX_DEPTH:
        return None, span.end, False
    if span.closed:
        return loads_lenient(body), span.end, False
    if span.in_string:
        return None, span.end, True
    closed = close_json(body)
    return (loads_lenient(closed) if closed else None), span.end, False


def find_harmony(text: str, masked: str) -> list[Found]:
    found: list[Found] = []
    for match in _HARMONY.finditer(masked):
        end_token = _HARMONY_END.search(text, match.end())
        limit = end_token.start() if end_token else len(text)
        value, end, cut = _json_at(text, match.end(), limit)
        body = text[match.end() : limit].strip()
        arguments: Any = value if isinstance(value, dict) else body
        end = end_token.end() if end_token else max(end, limit)
        calls = [RawCall(match.group("name"), arguments)]
        found.append(Found(match.start(), end, calls, BADGE_TEXT_TOKENS, MARKED, cut))
    return found


def find_kimi(text: str, masked: str) -> list[Found]:
    found: list[Found] = []
    for section in _KIMI_SECTION.finditer(masked):
        body = text[section.start("body") : section.end("body")]
        calls: list[RawCall] = []
        cut = False
        for call in _KIMI_CALL.finditer(body):
            raw = call.group("args")
            value, _, was_cut = _json_at(raw, 0, len(raw))
            cut = cut or was_cut
            calls.append(
                RawCall(call.group("id").strip(), value if isinstance(value, dict) else raw)
            )
        if calls:
            found.append(
                Found(section.start(), section.end(), calls, BADGE_TEXT_TOKENS, MARKED, cut)
            )
    for loose in _KIMI_LOOSE.finditer(masked):  # overlaps with a section: dropped by policy
        raw = text[loose.start("args") : loose.end("args")]
        value, _, was_cut = _json_at(raw, 0, len(raw))
        arguments: Any = value if isinstance(value, dict) else raw
        calls = [RawCall(loose.group("id"), arguments)]
        found.append(Found(loose.start(), loose.end(), calls, BADGE_TEXT_TOKENS, MARKED, was_cut))
    return found


def _deepseek_call(body: str) -> RawCall | None:
    """One call's body: `function<sep>name\n```json{…}```` (R1, V3) or `name<sep>{…}` (V3.1)."""
    parts = _DS_SEP.split(body, maxsplit=1)
    if len(parts) != 2:
        return None
    left, right = parts[0].strip(), parts[1]
    if left in ("function", ""):  # R1 / V3: function<sep>name\n```json\n{…}\n```
        name, _, rest = right.partition("\n")
        rest = re.sub(r"^\s*```(?:json)?\s*|\s*```\s*$", "", rest)
    else:  # V3.1: name<sep>{…}
        name, rest = left, right
    value = loads_lenient(rest.strip()) if rest.strip() else {}
    if value is None:
        closed = close_json(rest.strip())
        value = loads_lenient(closed) if closed else rest.strip()
    return RawCall(name.strip(), value)


def find_deepseek(text: str, masked: str) -> list[Found]:
    """Calls between DeepSeek's section tokens; a section whose per-call tokens were lost
    (`<section begin>name<sep>{…}<section end>`) is one call, and a section the reply ended
    inside right after a name is a call cut before its arguments."""
    found: list[Found] = []
    for block in _DS_CALLS.finditer(masked):
        body = text[block.start("body") : block.end("body")]
        calls: list[RawCall] = []
        cut = False
        for call in _DS_CALL.finditer(body):
            read = _deepseek_call(call.group("body"))
            if read is not None:
                calls.append(read)
        if not calls and not _DS_CALL.search(body):
            read = _deepseek_call(body)
            bare = re.fullmatch(r"\s*([A-Za-z_][\w.-]*)\s*", body)
            if read is not None:
                calls.append(read)
            elif bare and block.end() == len(text):  # the reply ended after the name
                calls, cut = [RawCall(bare.group(1), body.strip())], True
        if calls:
            end = block.end()
            noise = DEEPSEEK_NOISE.match(text, end)
            found.append(
                Found(
                    block.start(),
                    noise.end() if noise else end,
                    calls,
                    BADGE_TEXT_TOKENS,
                    MARKED,
                    cut,
                )
            )
    return found


def gemma_to_json(body: str, quote: str = _GEMMA_QUOTE) -> str:
    """Gemma's argument syntax as JSON: `<|"|>…<|"|>` (FunctionGemma: `<escape>…<escape>`)
    strings, raw, quotes and backslashes kept as written, become JSON strings; bare keys get
    quotes, and a key right after a string gets the comma the model left out."""
    pieces: list[tuple[str, bool]] = []  # (text, is a string)
    plain: list[str] = []
    i = 0
    while i < len(body):
        string = ""
        if body.startswith(quote, i):
            close = body.find(quote, i + len(quote))
            if close < 0:
                close = len(body)
            string = json.dumps(body[i + len(quote) : close], ensure_ascii=False)
            i = close + len(quote)
        elif body[i] == '"':  # a JSON string written as such
            span_end = _string_end(body, i)
            string, i = body[i:span_end], span_end
        else:
            plain.append(body[i])
            i += 1
            continue
        pieces += [("".join(plain), False), (string, True)]
        plain = []
    pieces.append(("".join(plain), False))
    out: list[str] = []
    after_string = False
    for piece, is_string in pieces:
        if not is_string:
            comma = "," if after_string else ""
            piece = _GEMMA_FIRST_KEY.sub(rf'{comma}\1"\2":', piece, count=1)
            piece = _GEMMA_KEY.sub(r'\1"\2":', piece)
        out.append(piece)
        after_string = is_string
    return "".join(out)


_GEMMA_KEY = re.compile(r"([{,]\s*)([A-Za-z_][\w-]*)\s*:")
_GEMMA_FIRST_KEY = re.compile(r"^(\s*)([A-Za-z_][\w-]*)\s*:")


def _string_end(text: str, start: int) -> int:
    escaped = False
    for i in range(start + 1, len(text)):
        if escaped:
            escaped = False
        elif text[i] == "\\":
            escaped = True
        elif text[i] == '"':
            return i + 1
    return len(text)


def _gemma_body_end(text: str, start: int, quote: str) -> tuple[int, bool]:
    """Where the `{…}` at `start` ends, `quote` strings read as strings; (end, closed)."""
    depth = 0
    i = start
    while i < len(text):
        if text.startswith(quote, i):
            close = text.find(quote, i + len(quote))
            if close < 0:
                return len(text), False
            i = close + len(quote)
            continue
        if text[i] == '"':
            i = _string_end(text, i)
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1, True
        i += 1
    return len(text), False


def _first_quote(text: str, start: int) -> str:
    """The string delimiter a Gemma call uses: whichever comes first after its name."""
    head = text[start : start + 4000]
    seen = [(head.find(q), q) for q in _GEMMA_QUOTES if q in head]
    return min(seen)[1] if seen else _GEMMA_QUOTE


def find_gemma(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    found: list[Found] = []
    consumed = 0
    for match in _GEMMA.finditer(masked):
        # `<call>name{…}`: the opener token split by a multimodal tokenizer (vLLM's tests);
        # a word a person may write too, so it counts as a bare call (a declared name only)
        marked = match.group("opener") is not None
        name = match.group("name") or match.group("fragment_name")
        if match.start() < consumed or not marked and not is_known(name):
            continue  # inside a call already read, or `call:x{…}` naming no declared tool
        quote = _first_quote(text, match.end())
        end, closed = _gemma_body_end(text, match.end(), quote)
        consumed = end  # linear: what a body covered is never read again
        body = text[match.end() : end]
        value = loads_lenient(gemma_to_json(body, quote)) if closed else None
        closer = _GEMMA_CLOSER.match(text, end)
        finish = closer.end() if closer else end
        arguments: Any = value if isinstance(value, dict) else body
        call = RawCall(name, arguments, needs_declared=not marked)
        found.append(
            Found(
                match.start(),
                finish,
                [call],
                BADGE_TEXT_TAG,
                MARKED if marked else BARE,
                not closed,
            )
        )
    return found


def find_mistral(text: str, masked: str) -> list[Found]:
    """`[TOOL_CALLS]name[ARGS]{…}` (Ministral, Devstral 2), `[TOOL_CALLS]name{…}`, and
    `[TOOL_CALLS]name[CALL_ID]id[ARGS]{…}` (Mistral Small 3.2)."""
    found: list[Found] = []
    for match in _MISTRAL.finditer(masked):
        nxt = masked.find("[TOOL_CALLS]", match.end())
        limit = nxt if nxt >= 0 else len(text)
        value, end, cut = _json_at(text, match.end(), limit)
        arguments: Any = value if isinstance(value, dict) else text[match.end() : limit].strip()
        found.append(
            Found(
                match.start(),
                end,
                [RawCall(match.group("name"), arguments)],
                BADGE_TEXT_TAG,
                MARKED,
                cut,
            )
        )
    return found
