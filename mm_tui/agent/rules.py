"""Permission rules: `bash(git *)`, `write_file(src/**)`, `read_file(~/.ssh/**)`.

A rule names a tool and, in parentheses, what it applies to: a command pattern for bash, a
path pattern for the file tools and lsp. The config's `permissions: {allow, ask, deny}` lists
are rules, and so are the session's grants (key `s`). Deny wins over ask, ask over allow.

Commands: `*` matches anything, and a trailing ` *` also matches nothing (`git *` matches
`git` and `git log`, never `gitk`). A command is read as bash reads it (`shell_syntax`, a real
bash grammar): a deny or ask rule applies when it matches any command in it, nested ones too,
by its name without folder (`/bin/rm`), past the words that run another command (`sudo`,
`env`, `command`, `xargs`, `bash -c '…'`, `eval '…'`…). When what runs cannot all be known
(a command name computed when it runs, `eval "$x"`, a shell reading a pipe, a line bash
cannot parse) and a deny rule exists, the person is asked even under yolo (`Effect.UNSURE`).
An allow rule applies only to a plain command (fixed words, `;` `&&` `||` `|`, no
substitution, expansion, assignment or redirection but to nowhere) and only when it matches
every simple command in it. Rules on commands are a guard against mistakes, not a sandbox:
a script or an interpreter can always run what a pattern did not foresee.

Paths: relative patterns are relative to the project; `~` is the home directory; `**` matches
any number of folders, `*` and `?` stay within one name. A call's path is matched both as
written (resolved) and with its symbolic links followed: deny and ask apply when either
matches, allow only when both do.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from mm_tui.agent.read_only import read_only_prefix
from mm_tui.agent.shell_syntax import Words, read_command
from mm_tui.agent.tools.paths import is_inside
from mm_tui.support.terminal_text import quoted

RULE_SHOWN = 80  # characters of a rule an error line quotes
#: The tools a rule may name (and `*`, every tool).
RULE_TOOLS = ("bash", "read_file", "write_file", "edit_file", "lsp", "*")
_RULE = re.compile(r"^\s*([A-Za-z_*][\w*]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


class RuleKind(Enum):
    """How a rule's pattern is read: a glob (config), an exact subject, or a read-only
    command's prefix (a grant: `git status *` for `git status` when it only reads)."""

    GLOB = "glob"
    EXACT = "exact"
    READ_ONLY = "read-only"


class Effect(Enum):
    """What a matching rule does to a call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"
    #: A deny rule may apply and the command cannot be read through: asked, even under yolo.
    UNSURE = "unsure"


@dataclass(frozen=True)
class Subject:
    """What a call is about, as the rules see it: the command, or the resolved path."""

    tool: str
    command: str | None = None
    path: Path | None = None


@dataclass(frozen=True)
class Rule:
    """One rule; `text` is how it is written and shown (`bash(git status *)`)."""

    tool: str
    pattern: str | None
    text: str
    kind: RuleKind = RuleKind.GLOB

    def matches(self, subject: Subject, root: Path, *, every: bool) -> bool:
        """Whether the rule applies; `every`: all parts must match (allow), else any."""
        if self.tool not in ("*", subject.tool):
            return False
        if self.pattern is None:
            return True
        if subject.command is not None:
            return _command_matches(self, subject.command, every=every)
        if subject.path is not None:
            return _path_matches(self, subject.path, root, every=every)
        return False

    @property
    def described(self) -> str:
        """What the rule allows, in words, for the question's `s` (`exactly this command`,
        `ls with any arguments (it only reads)`); a path grant by its text."""
        if self.tool == "bash" and self.kind is RuleKind.EXACT:
            return "exactly this command"
        if self.kind is RuleKind.READ_ONLY and self.pattern is not None:
            return f"{self.pattern.removesuffix(' *')} with any arguments (it only reads)"
        return self.text


class RuleError(ValueError):
    """A rule that cannot be read; the message says why, in one line."""


def parse_rule(text: str) -> Rule:
    """`bash(git *)` -> Rule; raises RuleError for anything else."""
    shown = f"'{quoted(text, RULE_SHOWN)}'"  # an error line never quotes a huge value
    found = _RULE.match(text)
    if not found:
        raise RuleError(f"{shown} is not a rule like bash(git *) or write_file(src/**)")
    tool, pattern = found.group(1), found.group(2)
    if tool not in RULE_TOOLS:
        raise RuleError(
            f"{shown}: unknown tool '{quoted(tool, RULE_SHOWN)}' (tools: {', '.join(RULE_TOOLS)})"
        )
    if pattern is not None and not pattern.strip():
        raise RuleError(f"{shown}: empty pattern; write {tool} alone for every call")
    if pattern is not None and any(c in pattern for c in "\x00\n\r"):
        raise RuleError(f"{shown}: a pattern is one line")
    return Rule(tool, pattern.strip() if pattern is not None else None, text.strip())


@dataclass(frozen=True)
class RuleSet:
    """The config's rules by effect."""

    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    @classmethod
    def parse(
        cls, allow: Iterable[str] = (), ask: Iterable[str] = (), deny: Iterable[str] = ()
    ) -> RuleSet:
        return cls(
            tuple(parse_rule(t) for t in allow),
            tuple(parse_rule(t) for t in ask),
            tuple(parse_rule(t) for t in deny),
        )

    def verdict(
        self, subject: Subject, root: Path, grants: Iterable[Rule] = ()
    ) -> tuple[Effect, Rule] | None:
        """The strongest rule that applies (deny, then ask, then allow or a grant), or None."""
        for effect, rules in ((Effect.DENY, self.deny), (Effect.ASK, self.ask)):
            for rule in rules:
                if rule.matches(subject, root, every=False):
                    return effect, rule
            if effect is Effect.DENY and subject.command is not None:
                doubt = _deny_in_doubt(subject, self.deny)
                if doubt is not None:
                    return Effect.UNSURE, doubt
        allowing = (*self.allow, *grants)
        for rule in allowing:
            if rule.matches(subject, root, every=True):
                return Effect.ALLOW, rule
        if subject.command is not None:  # `git log && ls`: each part allowed by some rule
            return _every_part_allowed(subject, allowing, root)
        return None

    def texts(self) -> list[tuple[str, str]]:
        """(effect, rule text) for `/permissions`."""
        return [
            (effect.value, rule.text)
            for effect, rules in (
                (Effect.DENY, self.deny),
                (Effect.ASK, self.ask),
                (Effect.ALLOW, self.allow),
            )
            for rule in rules
        ]


# --- commands -------------------------------------------------------------------------


def _command_matches(rule: Rule, command: str, *, every: bool) -> bool:
    assert rule.pattern is not None
    if rule.kind is RuleKind.EXACT:
        return command.strip() == rule.pattern
    reading = read_command(command)
    if every:
        return (
            reading.plain
            and bool(reading.commands)
            and all(_allows(rule, part) for part in reading.commands)
        )
    if rule.kind is RuleKind.READ_ONLY:
        return False  # a grant only allows
    pattern = _command_regex(rule.pattern)
    candidates = (
        *(" ".join(words) for words in reading.runs),
        *(part.text for part in reading.commands),
        " ".join(command.split()),
    )
    return any(pattern.fullmatch(candidate) for candidate in candidates)


def _allows(rule: Rule, part: Words) -> bool:
    """Whether an allow rule or a grant covers this simple command of a plain command."""
    if rule.pattern is None:
        return True
    if rule.kind is RuleKind.READ_ONLY:
        prefix = read_only_prefix(part)
        return prefix is not None and f"{' '.join(prefix)} *" == rule.pattern
    if rule.kind is RuleKind.EXACT:
        return False
    return bool(_command_regex(rule.pattern).fullmatch(part.text))


def _deny_in_doubt(subject: Subject, deny: tuple[Rule, ...]) -> Rule | None:
    """The deny rule that may apply to a command that cannot be read through, or None."""
    if not read_command(subject.command or "").unsure:
        return None
    return next((r for r in deny if r.tool in ("*", subject.tool) and r.pattern), None)


def _every_part_allowed(
    subject: Subject, allowing: tuple[Rule, ...], root: Path
) -> tuple[Effect, Rule] | None:
    reading = read_command(subject.command or "")
    if not reading.plain or len(reading.commands) < 2:
        return None
    first: Rule | None = None
    for part in reading.commands:
        rule = next(
            (r for r in allowing if r.tool in ("*", subject.tool) and _allows(r, part)), None
        )
        if rule is None:
            return None
        first = first or rule
    return (Effect.ALLOW, first) if first is not None else None


def _command_regex(pattern: str) -> re.Pattern[str]:
    words = " ".join(pattern.split())
    optional_tail = words.endswith(" *")
    if optional_tail:
        words = words[:-2]
    body = ".*".join(re.escape(piece) for piece in words.split("*"))
    return re.compile(body + ("(?: .*)?" if optional_tail else ""), re.DOTALL)


def command_grant(command: str) -> Rule:
    """The rule key `s` grants for a bash command: the prefix of a command that only reads
    (`ls *`, `git status *`: `read_only`), else exactly this command line."""
    command = command.strip()
    reading = read_command(command)
    if reading.plain and len(reading.commands) == 1:
        prefix = read_only_prefix(reading.commands[0])
        if prefix is not None:
            text = " ".join(prefix)
            return Rule("bash", f"{text} *", f"bash({text} *)", RuleKind.READ_ONLY)
    return Rule("bash", command, f"bash({command})", RuleKind.EXACT)


# --- paths ----------------------------------------------------------------------------


def _path_matches(rule: Rule, path: Path, root: Path, *, every: bool) -> bool:
    assert rule.pattern is not None
    candidates = {str(path), os.path.realpath(path)}
    if rule.kind is RuleKind.EXACT:
        target = str(Path(rule.pattern))
        results = [c == target for c in candidates]
    else:
        regex = _path_regex(rule.pattern, root)
        results = [bool(regex.fullmatch(c)) for c in candidates]
    return all(results) if every else any(results)


def _path_regex(pattern: str, root: Path) -> re.Pattern[str]:
    expanded = os.path.expanduser(pattern)
    if not os.path.isabs(expanded):
        expanded = os.path.join(root, expanded)
    expanded = os.path.normpath(expanded) + ("/" if pattern.endswith("/") else "")
    if expanded.endswith("/"):
        expanded += "**"
    out: list[str] = []
    index = 0
    while index < len(expanded):
        if expanded.startswith("**/", index):
            out.append("(?:.*/)?")
            index += 3
        elif expanded.startswith("**", index):
            out.append(".*")
            index += 2
        elif expanded[index] == "*":
            out.append("[^/]*")
            index += 1
        elif expanded[index] == "?":
            out.append("[^/]")
            index += 1
        else:
            out.append(re.escape(expanded[index]))
            index += 1
    return re.compile("".join(out), re.DOTALL)


def path_grant(tool: str, path: Path, root: Path) -> Rule:
    """The rule key `s` grants for a file tool: the file's folder (not its subfolders) inside
    the project, the file alone outside it."""
    folder = path.parent
    if is_inside(path, root) and not any(c in str(folder) for c in "*?["):
        relative = os.path.relpath(folder, root)
        shown = "*" if relative == "." else f"{relative}/*"
        return Rule(tool, os.path.join(str(folder), "*"), f"{tool}({shown})")
    return Rule(tool, str(path), f"{tool}({path})", RuleKind.EXACT)
