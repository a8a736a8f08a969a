"""The tool-call reader: calls found in what a model wrote, by class, not by format.

One module per class of writing, each returning `Found` spans: JSON in any shape anywhere
(`json_shapes`), XML-like markup (`markup`), special-token protocols (`special_tokens`),
Python-style calls (`pythonic`); `native_repair` mends the name and arguments of a call the
server did parse; `policy` decides which findings are calls (inline code, examples, reasoning,
placeholders, declared names). `read_calls` runs them all.
"""

from __future__ import annotations

import re

from mm_tui.agent.calls import json_shapes, markup, pythonic, special_tokens
from mm_tui.agent.calls.model import (
    BADGE_REASONING,
    Found,
    IsKnown,
    TextCall,
    TextCalls,
)
from mm_tui.agent.calls.policy import mask, select
from mm_tui.agent.calls.quoting import invented_turn

__all__ = ["CUT_REASON", "TextCall", "TextCalls", "read_calls"]

CUT_REASON = "[not run: the reply ended inside this call ({why}) — call it again, whole]"
#: A chain of special tokens (`<|role_sep|>`, `<｜tool▁sep｜>`) with short header words between
#: them (`<|message_sep|>function call<|role_sep|>`, `<|channel|>final<|message|>`) is protocol,
#: not prose; so are an end of sequence `</s>`, a stray `</think>` or `</answer>`.
#: Gemma 4's half-barred tokens (`<|channel>`, `<channel|>`, `<turn|>`) count as well.
_SPECIAL = r"(?:<\|[^|<>\s]{1,40}\|>|<｜[^｜<>]{1,40}｜>|<\|[a-z_]{1,40}>|<[a-z_]{1,40}\|>)"
_LEFTOVER_TOKENS = re.compile(
    rf"{_SPECIAL}(?:[ \t\r\n]*(?:[A-Za-z][\w .=:-]{{0,38}}?[ \t\r\n]*)?{_SPECIAL})*"
    r"|</?(?:s|think|answer|minimax:tool_call|tool_call|tools)>"
)
#: A wrapper left empty once its calls were taken out: `<TOOLCALL></TOOLCALL>`.
_EMPTY_WRAPPER = re.compile(r"<([A-Za-z][\w:.-]{0,40})>\s*</\1>")
_ONLY_BLANKS = re.compile(r"\s*\Z")
#: A fence left empty once the call inside it was taken out.
_EMPTY_FENCE = re.compile(r"```[\w+-]*[ \t]*\n\s*```")


def _find_all(text: str, masked: str, is_known: IsKnown) -> list[Found]:
    found: list[Found] = []
    found += special_tokens.find_harmony(text, masked)
    found += special_tokens.find_kimi(text, masked)
    found += special_tokens.find_deepseek(text, masked)
    found += special_tokens.find_gemma(text, masked, is_known)
    found += special_tokens.find_mistral(text, masked)
    found += pythonic.find_pythonic(text, masked, is_known)
    found += markup.find_qwen(text, masked)
    found += markup.find_invoke(text, masked, is_known)
    found += markup.find_glm(text, masked)
    found += markup.find_tool_tags(text, masked, is_known)
    found += json_shapes.find_tagged(text, masked)
    found += json_shapes.find_fenced(text, masked)
    found += json_shapes.find_bare(text, masked, is_known)
    return found


def read_calls(
    text: str, is_known: IsKnown, *, finished: bool = True, reasoning: bool = False
) -> TextCalls:
    """The calls written in `text` (the answer, or with `reasoning` the reasoning) and the
    text left for the person. `finished` is False when the reply was cut by the token limit:
    its last call, if incomplete, is then answered as not run."""
    turn = invented_turn(text)
    if turn >= 0:  # the reply ran on into a turn it invented: only its own part is read
        own = read_calls(text[:turn], is_known, finished=True, reasoning=reasoning)
        return TextCalls(own.calls, f"{own.remaining} {text[turn:].strip()}".strip())
    masked = mask(text)
    chosen = select(_find_all(text, masked, is_known), text, is_known, reasoning=reasoning)
    calls: list[TextCall] = []
    for number, item in enumerate(chosen):
        raw = text[item.start : item.end]
        last = number == len(chosen) - 1
        why = ""
        if not finished and last and _ONLY_BLANKS.match(text, item.end):
            why = CUT_REASON.format(why="finish_reason length")
        elif item.cut:
            why = CUT_REASON.format(why="it is not closed")
        badge = f"{BADGE_REASONING}: {item.badge.split(': ', 1)[-1]}" if reasoning else item.badge
        for call in item.calls:
            calls.append(TextCall(call.name, call.arguments, raw, badge, why))
    pieces: list[str] = []
    at = 0
    before = ""  # the last piece kept that is not empty
    for start, end in [*((item.start, item.end) for item in chosen), (len(text), len(text))]:
        piece, at = text[at:start], end  # chosen: sorted by start, not overlapping
        if before.endswith((" ", "\t")) and piece.startswith((" ", "\t")):
            piece = piece.lstrip(" \t")
        pieces.append(piece)
        before = piece or before
    remaining = "".join(pieces)
    if chosen:
        remaining = special_tokens.HARMONY_NOISE.sub("", remaining)
        remaining = special_tokens.DEEPSEEK_NOISE.sub("", remaining)
        remaining = _LEFTOVER_TOKENS.sub("", remaining)
        remaining = _EMPTY_WRAPPER.sub("", remaining)
        remaining = _EMPTY_FENCE.sub("", remaining)
    return TextCalls(calls, remaining.strip())
