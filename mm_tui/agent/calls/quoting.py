"""Calls a reply shows without meaning them: the classes that keep a found call from running.

A model that makes a call in text (its server has no native tools, or it forgot them) writes
the call as the reply's main content: alone in its fence or tags, or after a short lead-in
("I'll list the files:"), and stops. A call that is only shown sits in other company:

- **offered**: the reply proposes it or asks first — a question to the person after it
  ("Shall I run it?", "Let me know if you want me to…"), or a conditional before it ("If you
  want, I can run …", "You could …");
- **declined**: the sentence that holds it turns it down ("… but I would rather not");
- **quoted**: it stands inside something else's text — a markdown quote (`> …`), prose
  quotation marks, or code of another language (that code is blanked before any reader looks,
  `policy.mask`; a Python block counts only when it holds nothing but calls);
- **illustrated**: the prose presents it as an example or a format (`policy.is_illustration`);
- **reasoned**: it is written in the thinking (a `<think>` block left in the answer, or the
  reasoning itself) while the answer does something else than announce it.

A call shown this way is never run: it stays in the answer as the text it is, and the turn goes
on as for any answer. The classes are read from the shape around the call (where it stands,
what follows it), with a few words each for the question, the condition and the refusal.
"""

from __future__ import annotations

import re

#: A question in which the model asks leave to act ("Shall I run it?", "Do you want me to…?");
#: "Would you like to know more?" after a call asks nothing about the call.
_QUESTION = re.compile(r"[^.!?\n]*\b(?:I|me|we|us)\b[^.!?\n]*\?", re.IGNORECASE)
_ASKS = re.compile(
    r"\b(?:let me know (?:if|whether|when)|if you (?:want|like|wish|prefer|agree|approve)|"
    r"if you'd like|say the word|just say so|your (?:go-ahead|approval|confirmation))\b",
    re.IGNORECASE,
)
_CONDITIONAL_BEFORE = re.compile(
    r"\b(?:you (?:could|can|might|may|would)|I (?:could|might)|if you (?:want|like|wish|prefer)|"
    r"if you'd like|would you like|do you want|shall I|should I|one could|someone could)\b",
    re.IGNORECASE,
)
_DECLINED_AFTER = re.compile(
    r"^[^\n]{0,80}?\b(?:rather not|won't|will not|shouldn't|should not|no need|not needed|"
    r"don't need|do not need|instead|already know|not going to)\b",
    re.IGNORECASE,
)
_OPEN_QUOTES = {'"': '"', "“": "”", "«": "»", "‘": "’", "'": "'"}
_THINK = re.compile(
    r"<(?P<tag>(?:[\w-]+:)?think(?:ing)?)>(?P<body>.*?)</(?P=tag)>", re.DOTALL | re.IGNORECASE
)
#: An announcement of what comes next: the words a lead-in uses.
_ANNOUNCES = re.compile(
    r"\b(?:I'll|I will|I'm going to|I am going to|let me|let's|I need to|I should|I must|"
    r"now|first|next|then|checking|looking|reading|running|calling|searching|opening|listing|"
    r"using|trying)\b",
    re.IGNORECASE,
)
_LEAD_IN_CHARS = 200
#: A few words ("Hello", "Sure.") say nothing else either.
_FEW_WORDS = 6


#: A paragraph after a call, before any next call: the reply goes on explaining what it showed.
_PARAGRAPH_AFTER = re.compile(r"[ \t]*\r?\n[ \t]*\r?\n\s*\S")


def not_meant(text: str, start: int, end: int, next_start: int, *, bare: bool = False) -> str:
    """The class of a call at text[start:end] that is shown, not made ("" when it is made);
    `next_start` is where the next call begins (or the end of the text). A `bare` call (JSON or
    a Python line standing in prose, neither in the model's markers nor set apart in a fence)
    followed by a paragraph of prose is illustrated, in whatever language the prose is: a
    model that makes a call in its text writes it last and waits for the result."""
    window = max(start - 1000, 0)  # a bounded look back: linear on a flood of calls
    line_start = text.rfind("\n", window, start) + 1 or window
    before_line = text[line_start:start]
    if before_line.lstrip().startswith(">"):
        return "quoted"
    before = start
    while before > 0 and text[before - 1] in " \t":  # no copy of the text before: linear
        before -= 1
    opening = text[before - 1 : before]
    after_blanks = end
    while after_blanks < len(text) and text[after_blanks] in " \t":
        after_blanks += 1
    closing = text[after_blanks : after_blanks + 1]
    if opening in _OPEN_QUOTES and closing == _OPEN_QUOTES[opening]:
        return "quoted"
    after = text[end : min(next_start, end + 400)]
    if bare and _PARAGRAPH_AFTER.match(after):
        return "illustrated"
    if _DECLINED_AFTER.search(after):
        return "declined"
    if _QUESTION.search(after) or _ASKS.search(after):
        return "offered"
    sentence = re.split(r"[.!?]\s|\n\s*\n", text[max(start - 300, 0) : start])[-1]
    if _CONDITIONAL_BEFORE.search(sentence):
        return "offered"
    return ""


#: Where a reply runs on into a turn the model invented: a speaker label or a chat template's
#: turn token. Calls written after it belong to that imagined exchange.
_INVENTED_TURN = re.compile(
    r"(?:(?<=\s)|^)(?:USER|Human|HUMAN)[ \t]*:[ \t]|<\|im_start\|>[ \t]*user"
    r"|<\|start_header_id\|>[ \t]*user|<start_of_turn>[ \t]*user"
)


def invented_turn(text: str) -> int:
    """Where the reply starts writing a turn that is not its own (-1 when it does not): what
    follows is quoted from an imagined exchange, never this reply's call."""
    match = _INVENTED_TURN.search(text)
    return match.start() if match else -1


def thinking_spans(text: str) -> list[tuple[int, int]]:
    """Where the answer text holds closed `<think>…</think>` blocks (also `<seed:think>`)."""
    return [match.span() for match in _THINK.finditer(text)]


def outside(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` without the given spans."""
    pieces: list[str] = []
    at = 0
    for start, end in spans:
        pieces.append(text[at:start])
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


def is_lead_in(answer: str) -> bool:
    """Whether an answer does nothing but announce a call: empty, a few words, or one short
    sentence of intent ("Let me look at the file.", "I'll list the files:") with nothing after
    a colon."""
    stripped = answer.strip()
    if not stripped or len(stripped.split()) <= _FEW_WORDS and ":" not in stripped:
        return True
    if len(stripped) > _LEAD_IN_CHARS or "\n\n" in stripped:
        return False
    if re.search(r"[.!?]\s+\S", stripped):  # a second sentence: the answer says more
        return False
    colon = stripped.find(":")
    if colon != -1 and stripped[colon + 1 :].strip():
        return False
    return bool(_ANNOUNCES.search(stripped))


EMPTY_ANSWER = "the model returned an empty answer"
THINKING_ONLY = "the model returned only its thinking, no answer"
#: Said when an empty or thinking-only reply is asked for once more.
ASKING_AGAIN = "{} — asking it once more"


def empty_answer(text: str, reasoning: str) -> str:
    """The line for a reply that says nothing to the person: no text (or only `<think>`
    blocks and blanks), with or without reasoning; "" when the answer says something."""
    if outside(text, thinking_spans(text)).strip():
        return ""
    return THINKING_ONLY if reasoning.strip() or text.strip() else EMPTY_ANSWER
