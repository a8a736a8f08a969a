"""From what a small model writes in `symbol` to the places in a file worth asking about.

A small model cannot count columns (seeds/lsp-tool-design.fr.md), so the tool takes the
identifier and finds it: stray quotes and punctuation are trimmed, a `receiver.` / `pkg.`
prefix is removed, and its whole-word occurrences are tried in order — code lines first,
comment lines last, since a name is often cited in the comment above its declaration and a
server has nothing to say about a comment (SPEC §4).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from mm_tui.lsp.text import shared_lines
from mm_tui.lsp.words import COMMON, WordRule

#: Where a call, an index or a generic starts: what follows is not the name (`greet(x)`).
_CALL_OR_GENERIC = re.compile(r"[(\[<{]")
#: Words a model puts in front of the name it means (`func greet`), skipped among several.
_DECLARATION_WORDS = frozenset(
    [
        "def",
        "func",
        "fn",
        "function",
        "class",
        "struct",
        "type",
        "var",
        "let",
        "const",
        "val",
        "interface",
        "enum",
        "impl",
        "trait",
        "pub",
        "public",
        "private",
        "static",
        "async",
        "method",
        "module",
        "package",
        "import",
        "from",
        "new",
    ]
)
_COMMENT_STARTS = ("#", "//", "/*", "*", "--", '"""', "'''", ";", "!")


@dataclass(frozen=True)
class Occurrence:
    """One whole-word occurrence: 0-based line, 0-based column in characters."""

    line: int
    column: int


def _word_identifier(word: str, rule: WordRule) -> str:
    """The name one whitespace-free word means: `person.Greet()` → `Greet`, `'x',` → `x`."""
    head = _CALL_OR_GENERIC.split(word, maxsplit=1)[0] if rule.calls else word
    qualifiers = rule.qualifiers
    for part in reversed(qualifiers.split(head)) if qualifiers else (head,):
        found = rule.pattern.findall(part)
        if found:
            return found[-1]
    found = rule.pattern.findall(word)
    return found[0] if found else ""


def _identifiers(raw: str, rule: WordRule) -> list[str]:
    """The names of each word of `raw`, declaration words dropped when there are several."""
    names = [name for name in (_word_identifier(word, rule) for word in raw.split()) if name]
    meaningful = [name for name in names if name not in _DECLARATION_WORDS]
    return meaningful or names


@functools.lru_cache(maxsize=256)
def clean_symbol(raw: str, rule: WordRule = COMMON) -> str:
    """The identifier `raw` means (SPEC §4 `symbol`) under the language's `rule`; "" when it
    holds none. Remembered: a pure function of the text, asked again by every warm call."""
    names = _identifiers(raw, rule)
    return names[0] if names else ""


def symbol_and_new_name(
    raw_symbol: str, raw_new_name: str, rule: WordRule = COMMON
) -> tuple[str, str]:
    """The rename's (symbol, new name), accepting the several-words form `Greet 1 12 Hello`."""
    new_name = clean_symbol(raw_new_name, rule)
    names = _identifiers(raw_symbol, rule)
    if not names:
        return "", new_name
    if not new_name and len(names) >= 2:
        return names[0], names[-1]
    return names[0], new_name


def is_comment_line(line: str) -> bool:
    """Whether a line reads as a comment (or a docstring) in the common languages."""
    return line.lstrip().startswith(_COMMENT_STARTS)


def find_occurrences(
    text: str, symbol: str, only_line: int | None = None, rule: WordRule = COMMON
) -> list[Occurrence]:
    """Whole-word occurrences of `symbol` (words as the language's `rule` has them), code
    lines first then comment lines, each in order.

    `only_line` (0-based) keeps the occurrences on that line alone.
    """
    return list(_occurrences(text, symbol, only_line, rule))


@functools.lru_cache(maxsize=64)
def _occurrences(
    text: str, symbol: str, only_line: int | None, rule: WordRule
) -> tuple[Occurrence, ...]:
    """Remembered: a warm call asks about the same unchanged text again and again."""
    if not symbol:
        return ()
    pattern = rule.occurrence_pattern(symbol)
    code: list[Occurrence] = []
    comments: list[Occurrence] = []
    for number, line in enumerate(shared_lines(text)):
        if only_line is not None and number != only_line:
            continue
        found = [Occurrence(number, match.start("name")) for match in pattern.finditer(line)]
        if found:
            (comments if is_comment_line(line) else code).extend(found)
    return (*code, *comments)


@functools.lru_cache(maxsize=256)
def identifier_at(line: str, column: int, rule: WordRule = COMMON) -> str:
    """The identifier of `line` that contains (or starts at) character `column`, else "".
    Remembered: a warm call asks about the same line again and again."""
    for match in rule.pattern.finditer(line):
        if match.start() <= column < max(match.end(), match.start() + 1):
            return match.group()
        if match.start() > column:
            break
    return ""
