"""Which of the calls the readers found are calls (issue 12). The policy, in one place:

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
- **A call written only in the reasoning** runs when the answer has no call of its own,
  whether or not the answer has text, provided it is written in the model's own markers (tags,
  special tokens, markup: never bare JSON, a fenced block or a pythonic line, which reasoning
  is full of as drafts), is complete, and is not presented as an example. The answer's text is
  shown as written, and the row carries the badge `from reasoning`. Why: models that think
  between calls (Kimi K2 Thinking, GLM 4.7, gpt-oss, Qwen3 under a reasoning parser) emit their
  real calls inside the reasoning and then a line of text ("Let me look at the file."); left
  unrun, the turn stalls. A marked call in the reasoning is the model's protocol, not a draft;
  running it costs one extra step if the model had changed its mind, and permissions still
  ask before anything that writes or runs a command.
- **A call cut by the end of the reply** (finish_reason `length`, or inside a string) never
  runs and is never completed: it is answered as not run, with the reason.
"""

from __future__ import annotations

import re

from mm_tui.agent.calls.model import BARE, MARKED, Found, IsKnown, clean_tool_name, is_placeholder

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
    return _FENCE.sub(
        lambda m: m.group(0) if m.group("lang").lower() in _CALL_LANGS else blank(m), masked
    )


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
    kept: list[Found] = []
    for item in chosen:
        if reasoning and (item.strength < MARKED or item.cut):
            continue  # a draft, or a call the thinking broke off: not a call
        if is_illustration(text, item.start):
            continue
        calls = []
        for call in item.calls:
            name = clean_tool_name(call.name, is_known)
            known = is_known(name)
            if not known and (is_placeholder(name) or call.needs_declared or item.strength == BARE):
                calls = []
                break
            calls.append(type(call)(name, call.arguments, call.needs_declared))
        if calls:
            kept.append(Found(item.start, item.end, calls, item.badge, item.strength, item.cut))
    return kept
