"""Which of the calls the readers found are calls. The policy, in one place:

- **Inline code is never a call.** Text between single backticks (`` `{"name": "bash"}` ``)
  mentions call syntax; it is blanked before any reader looks.
- **Code examples are not calls.** A fenced block in a language other than JSON or Python
  (```bash, ```go …) is blanked; a call whose line, or the line before it, says it is an
  example ("for example", "e.g.", "example:", "for instance", "would look like") is not run.
- **Prose that offers or describes a call is not a call**: only a call-shaped block counts.
- **Bare JSON, a name line followed by JSON, a Python-style call outside the model's markers
  (alone on a line, or a bracketed list anywhere in prose) or a bare Gemma-style
  `call:name{…}` counts only when it names a declared tool**; the model's own markers (tags,
  special tokens, markup) and fenced blocks count for any name, so an undeclared one is
  answered with the closest name.
- **No placeholder becomes a tool name**: `...`, `<name>`, `tool_name` and the like, unless a
  tool of that name is declared.
- **A call written only in the reasoning** (or in a `<think>` block left in the answer) runs
  when the answer has no call of its own and does nothing but announce one: it is empty, or
  one short sentence of intent ("Let me look at the file.", "I'll list the files:"). It must be
  written in the model's own markers (tags, special tokens, markup: never bare JSON, a fenced
  block or a pythonic line, which reasoning is full of as drafts), be complete, and not be
  presented as an example. The answer's text is shown as written, and the row carries the
  badge `from reasoning`. Why: models that think between calls (Kimi K2 Thinking, GLM 4.7,
  gpt-oss, Qwen3 under a reasoning parser) emit their real calls inside the reasoning and then
  a line of text; left unrun, the turn stalls. But a call the thinking weighed while the answer
  answers ("I'll just answer: …") was turned down: running it is a command nobody asked for.
- **A call shown, not made, never runs** (`quoting`): offered (a question or a condition around
  it), declined, quoted (a markdown quote, prose quotation marks, code of another language, a
  turn the model invented after its own: `USER:`, `<|im_start|>user`) or illustrated (words
  that say so, or a bare call followed by a paragraph of prose, in any language: a model that
  makes a call in its text writes it last). It stays in the text; the turn goes on as for any
  answer.
- **A call cut by the end of the reply** (finish_reason `length`, inside a string, inside its
  arguments object, or right after its opener or its name) never runs and is never completed:
  it is answered as not run, with the reason, so the model sends it again whole.
- **A name alone between the model's own markers** (`<tool_call>{"name": "x"}</tool_call>`) is
  a call without arguments, for any name: an undeclared one is answered with the available
  tools, a declared one by the tool itself (what it needs), so the model can try again.
"""

from __future__ import annotations

import logging
import re

from mm_tui.agent.calls.model import BARE, MARKED, Found, IsKnown, clean_tool_name, is_placeholder
from mm_tui.agent.calls.quoting import is_lead_in, not_meant, outside, thinking_spans

log = logging.getLogger(__name__)

_INLINE_CODE = re.compile(r"(?<!`)`(?!`)[^`\n]+`(?!`)")
_FENCE = re.compile(r"```[ \t]*(?P<lang>[\w+-]*)[^\n]*\n.*?```", re.DOTALL)
_CALL_LANGS = {"", "json", "json5", "tool_call", "tool_code", "python", "py"}
_ILLUSTRATION = re.compile(
    r"\b(?:for example|e\.g\.|for instance|example|would look like|looks like this|"
    r"the (?:format|syntax) is)\b",
    re.IGNORECASE,
)


def mask(text: str) -> str:
    """`text` with inline code and foreign code blocks blanked (same length, so spans found in
    the mask point into the text)."""

    def blank(match: re.Match[str]) -> str:
        return re.sub(r"[^\n]", " ", match.group(0))

    masked = _INLINE_CODE.sub(blank, text)
    return _FENCE.sub(lambda m: m.group(0) if _holds_calls(m) else blank(m), masked)


#: A Python statement that is not a call: code that may quote a call, never one itself.
_PYTHON_CODE = re.compile(
    r"(?m)^[ \t]*(?:(?:import|from|def|class|for|while|if|elif|else|with|return|print|async|"
    r"await|try|except|finally|raise|assert)\b|[A-Za-z_][\w.\[\]\"']*[ \t]*(?::[^=\n]*)?=(?!=))"
)


#: A block that is nothing but one call in the model's own wrapper tags (```xml around
#: `<response>{…}</response>`): the fence is the call's container, whatever its label.
_WRAPPED_CALL = re.compile(
    r"\s*<(?P<tag>tool_call|tool_calls|function_call|tools|tool|response)>.*</(?P=tag)>\s*",
    re.DOTALL,
)


def _holds_calls(fence: re.Match[str]) -> bool:
    """Whether a fenced block may hold calls: JSON or unlabelled, Python that is only calls
    (an SDK snippet that builds a `tool_calls` list quotes a call, it does not make one), or
    any block that is only a call in wrapper tags."""
    lang = fence.group("lang").lower()
    body = fence.group(0).split("\n", 1)[-1].removesuffix("```")
    if lang not in _CALL_LANGS:
        return bool(_WRAPPED_CALL.fullmatch(body))
    return lang not in ("python", "py") or not _PYTHON_CODE.search(body)


def is_illustration(text: str, start: int) -> bool:
    """Whether the prose just before `start` (its line and the line before) presents what
    follows as an example."""
    window = max(start - 300, 0)
    line_start = text.rfind("\n", window, max(start - 1, 0))
    line_start = text.rfind("\n", window, max(line_start, 0)) + 1 if line_start > 0 else window
    return bool(_ILLUSTRATION.search(text[line_start:start]))


def select(found: list[Found], text: str, is_known: IsKnown, *, reasoning: bool) -> list[Found]:
    """The spans that are calls: no overlaps (earlier first, then stronger, then longer), then
    the policy above, names cleaned."""
    chosen: list[Found] = []
    for item in sorted(found, key=lambda f: (f.start, -f.strength, -(f.end - f.start))):
        if chosen and item.start < chosen[-1].end:  # starts sorted, ends increasing
            continue
        chosen.append(item)
    thinking = thinking_spans(text)
    kept: list[Found] = []
    shown = _shown(chosen, text)
    for number, item in enumerate(chosen):
        in_thinking = any(start <= item.start < end for start, end in thinking)
        if (reasoning or in_thinking) and (item.strength < MARKED or item.cut):
            continue  # a draft, or a call the thinking broke off: not a call
        if is_illustration(text, item.start) or shown[number]:
            log.debug("a call shown, not made (%s): not run", shown[number] or "illustrated")
            continue
        calls = []
        for call in item.calls:
            name = clean_tool_name(call.name, is_known)
            known = is_known(name)
            if not known and (is_placeholder(name) or call.needs_declared or item.strength == BARE):
                if item.strength == BARE:  # JSON in prose naming no tool: data, not calls
                    calls = []
                    break
                continue  # a line of a marked or fenced block that is no call: the rest are
            calls.append(type(call)(name, call.arguments, call.needs_declared))
        if calls:
            kept.append(Found(item.start, item.end, calls, item.badge, item.strength, item.cut))
    return _thinking_calls(kept, thinking, text)


def _shown(chosen: list[Found], text: str) -> list[str]:
    """For each call, the class that makes it shown rather than made ("" when made). Calls in
    a row (nothing but blanks between them) share the offer or refusal that follows the last."""
    classes: list[str] = []
    for number, item in enumerate(chosen):
        after = chosen[number + 1].start if number + 1 < len(chosen) else len(text)
        bare = item.strength == BARE
        classes.append(not_meant(text, item.start, item.end, after, bare=bare))
    for number in range(len(chosen) - 2, -1, -1):
        between = text[chosen[number].end : chosen[number + 1].start]
        shared = classes[number + 1] in ("offered", "declined")
        if not classes[number] and shared and not between.strip(" \t\r\n,;"):
            classes[number] = classes[number + 1]
    return classes


def _thinking_calls(kept: list[Found], thinking: list[tuple[int, int]], text: str) -> list[Found]:
    """A call inside a `<think>` block left in the answer counts as reasoning does: only when
    the answer outside the thinking makes no call and does nothing but announce one."""
    if not thinking:
        return kept

    def inside(item: Found) -> bool:
        return any(start <= item.start < end for start, end in thinking)

    made = [item for item in kept if not inside(item)]
    if made or not is_lead_in(outside(text, thinking)):
        return made
    return kept
