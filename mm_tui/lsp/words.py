"""What counts as one identifier, per language: `--brand-color` is one name in CSS.

The tool finds the places of a `symbol` by its whole-word occurrences (symbols.py); a rule
that cut names at `-` made `--brand-color` mean `color`, and a rename rewrote the end of a
CSS custom property. Each rule says which characters make up a name in its languages, which
sigils may start one (`$x` in PHP, `@x` in Ruby) and what separates a qualifier from the name
(`person.Greet`, `ns/name`). A language without a rule keeps the common one, widened by what
the model wrote when that occurs as written (`my-var` is one word where the file has it so);
the server's own range for the place (rename_action.py) has the last word.
"""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class WordRule:
    """How names are written in some languages."""

    #: One name, as a regular expression (its first match in a word is the name).
    name: str
    #: The characters a name may hold beside letters and digits: bounds of whole words.
    inside: str
    #: What separates a qualifier from the name (`person.Greet` → `Greet`); "" for none.
    qualifier: str = r"\.|::|->|/"
    #: Sigils a name may start with in the file when the model wrote it without (`$x`).
    sigils: str = ""
    #: Whether `name(` is a call (what follows is not the name); in CSS `var(--x)` and a
    #: Lisp form `(greet x)`, the name is inside.
    calls: bool = True

    @functools.cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.name)

    @functools.cached_property
    def qualifiers(self) -> re.Pattern[str] | None:
        return re.compile(self.qualifier) if self.qualifier else None

    def occurrence_pattern(self, symbol: str) -> re.Pattern[str]:
        """`symbol` as a whole word of this rule (a sigil in front allowed)."""
        inside = re.escape(self.inside)
        sigil = (
            f"[{re.escape(self.sigils)}]?" if self.sigils and symbol[:1] not in self.sigils else ""
        )
        # A sigil in front is part of the place (`$x` asked as `x`): the column is the name's.
        return re.compile(rf"(?<![\w{inside}]){sigil}(?P<name>{re.escape(symbol)})(?![\w{inside}])")


COMMON = WordRule(name=r"(?:[^\W\d]|\$)[\w$]*", inside="$")
CSS = WordRule(name=r"[$@]?-{0,2}[^\W\d][\w-]*", inside="-$@", qualifier="", calls=False)
SHELL = WordRule(name=r"[^\W\d][\w.:-]*", inside=".:-", qualifier="/")
LISP = WordRule(
    name=r"[^\s()\[\]{}\"'`,;#|\\/0-9][^\s()\[\]{}\"'`,;|\\/]*",
    inside="-?!*+<>=:&%.",
    qualifier="/",
    calls=False,
)
RUBY = WordRule(name=r"(?:@@|@|\$)?[^\W\d]\w*[?!]?", inside="?!@$", qualifier=r"\.|::", sigils="@$")
ELIXIR = WordRule(name=r"@?[^\W\d]\w*[?!]?", inside="?!@", qualifier=r"\.", sigils="@")
PHP = WordRule(name=r"\$?[^\W\d]\w*", inside="$", qualifier=r"->|::|\\", sigils="$")
HASKELL = WordRule(name=r"[^\W\d][\w']*", inside="'", qualifier=r"\.")
NIX = WordRule(name=r"[^\W\d][\w'-]*", inside="'-", qualifier=r"\.")

_BY_EXTENSION = {
    **dict.fromkeys((".css", ".scss", ".sass", ".less"), CSS),
    **dict.fromkeys((".sh", ".bash", ".zsh", ".ksh", ".command"), SHELL),
    **dict.fromkeys(
        (
            ".lisp",
            ".lsp",
            ".cl",
            ".el",
            ".clj",
            ".cljs",
            ".cljc",
            ".edn",
            ".scm",
            ".ss",
            ".rkt",
            ".fnl",
            ".janet",
        ),
        LISP,
    ),
    **dict.fromkeys((".rb", ".rake", ".gemspec"), RUBY),
    **dict.fromkeys((".ex", ".exs"), ELIXIR),
    **dict.fromkeys((".php", ".phtml"), PHP),
    **dict.fromkeys((".hs", ".lhs", ".elm", ".purs"), HASKELL),
    ".nix": NIX,
}
#: Characters a name of an unknown language may hold when the model wrote them and the file
#: has the name so (a name is never cut at them there).
_WIDENING = "-?!@'"


@functools.lru_cache(maxsize=256)
def rule_for(path: str) -> WordRule:
    """The rule of a file's language, by its extension (the common one when unknown)."""
    return _BY_EXTENSION.get(os.path.splitext(path)[1].lower(), COMMON)


@functools.lru_cache(maxsize=64)
def widened(rule: WordRule, raw: str, text: str) -> WordRule:
    """For a language without its own rule: when the model's `raw` symbol holds characters
    the common rule cuts at (`my-var`, `valid?`) and occurs so in `text` as a whole word,
    the rule for this call takes them as part of the name."""
    token = raw.strip().strip("`\"'").strip().rstrip(",;:.")
    extra = "".join(sorted({c for c in token if c in _WIDENING}))
    if (
        rule is not COMMON
        or not extra
        or not re.fullmatch(rf"[\w$@{re.escape(_WIDENING)}]+", token)
    ):
        return rule
    inside = COMMON.inside + extra
    wide = WordRule(
        name=rf"[\w$@{re.escape(extra)}]*[^\W\d][\w$@{re.escape(extra)}]*",
        inside=inside,
        qualifier=r"\.|::|->|/",
    )
    return wide if wide.occurrence_pattern(token).search(text) else rule


def rule_with(rule: WordRule, name: str) -> WordRule:
    """`rule`, taking the characters of `name` (a name as the server gave its range) as
    part of names: `--main-color` stays whole when the server's name is `--brand-color`."""
    extra = "".join(sorted({c for c in name if not (c.isalnum() or c == "_")} - set(rule.inside)))
    if not extra:
        return rule
    chars = re.escape(rule.inside + extra)
    return WordRule(
        name=rf"[\w{chars}]*[^\W\d][\w{chars}]*",
        inside=rule.inside + extra,
        qualifier="",
        sigils=rule.sigils,
        calls=False,
    )
