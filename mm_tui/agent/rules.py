"""Permission rules: `bash(git *)`, `write_file(src/**)`, `read_file(~/.ssh/**)` (issue 11).

A rule names a tool and, in parentheses, what it applies to: a command pattern for bash, a
path pattern for the file tools and lsp. The config's `permissions: {allow, ask, deny}` lists
are rules, and so are the session's grants (key `s`). Deny wins over ask, ask over allow.

Commands: `*` matches anything, and a trailing ` *` also matches nothing (`git *` matches
`git` and `git log`, never `gitk`). A command is split into its simple commands (`;`, `&&`,
`||`, `|`, `&`, newlines): a deny or ask rule that matches any of them applies; an allow rule
applies only when it matches every one and the command substitutes no other command
(`$(…)`, backquotes, `<(…)`). Rules on commands are a guard against mistakes, not a sandbox:
`bash -c '…'` or a script can always run what a pattern did not foresee.

Paths: relative patterns are relative to the project; `~` is the home directory; `**` matches
any number of folders, `*` and `?` stay within one name. A call's path is matched both as
written (resolved) and with its symbolic links followed: deny and ask apply when either
matches, allow only when both do.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from mm_tui.agent.tools.paths import is_inside
from mm_tui.support.terminal_text import quoted

RULE_SHOWN = 80  # characters of a rule an error line quotes
#: The tools a rule may name (and `*`, every tool).
RULE_TOOLS = ("bash", "read_file", "write_file", "edit_file", "lsp", "*")
_RULE = re.compile(r"^\s*([A-Za-z_*][\w*]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)
_SUBSTITUTION = ("$(", "`", "<(", ">(")
_OPERATORS = {";", "&&", "||", "|", "&", "|&", ";;", "\n"}
_PLAIN_WORD = re.compile(r"^[A-Za-z0-9][\w.:+@%=-]*$")
#: Programs whose second word picks what they do: a grant covers `git status`, not `git`.
_WITH_SUBCOMMANDS = {
    "git",
    "npm",
    "pnpm",
    "yarn",
    "bun",
    "deno",
    "cargo",
    "go",
    "docker",
    "podman",
    "kubectl",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "hatch",
    "pdm",
    "conda",
    "apt",
    "apt-get",
    "brew",
    "dnf",
    "systemctl",
    "gh",
    "dotnet",
    "mvn",
    "gradle",
    "make",
    "just",
    "rustup",
    "helm",
    "terraform",
}
#: Output redirections that write nothing anywhere (`2>&1`, `>/dev/null`); any other `>`
#: writes a file, which an allow rule on a command never covers.
_HARMLESS_REDIRECT = re.compile(r"\d?>&\d|\d?>\s*/dev/null")
#: Words that run the command after them (`sudo rm …`): deny and ask rules look past them.
_RUNNERS = {"sudo", "env", "exec", "command", "builtin", "nice", "nohup", "time", "xargs", "doas"}


class RuleKind(Enum):
    """How a rule's pattern is read: a glob (config), a command prefix or an exact subject."""

    GLOB = "glob"
    EXACT = "exact"


class Effect(Enum):
    """What a matching rule does to a call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


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


def simple_commands(command: str) -> list[str] | None:
    """The simple commands of a command line, words joined by one space; None when the line
    cannot be split (an unclosed quote). Redirections to nowhere (`2>&1`) are left out."""
    command = _HARMLESS_REDIRECT.sub(" ", command).replace("\n", " ; ")
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    lexer.commenters = ""
    segments: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in _OPERATORS:
                segments.append([])
            else:
                segments[-1].append(token)
    except ValueError:
        return None
    return [" ".join(words) for words in segments if words]


def _command_matches(rule: Rule, command: str, *, every: bool) -> bool:
    assert rule.pattern is not None
    if rule.kind is RuleKind.EXACT:
        return command == rule.pattern
    if every and not _plain_command(command):
        return False
    pattern = _command_regex(rule.pattern)
    parts = simple_commands(command)
    if parts is None:  # cannot be split: only the whole line can match
        return not every and bool(pattern.fullmatch(command.strip()))
    if not parts:
        return False
    if every:
        return all(pattern.fullmatch(part) for part in parts)
    whole = " ".join(command.split())
    candidates = (*parts, *(_unwrapped(part) for part in parts), whole)
    return any(pattern.fullmatch(part) for part in candidates)


def _plain_command(command: str) -> bool:
    """No substitution of another command and no redirection that writes a file."""
    if any(mark in command for mark in _SUBSTITUTION):
        return False
    return ">" not in _HARMLESS_REDIRECT.sub("", command)


def _unwrapped(part: str) -> str:
    """`sudo -u x env A=1 rm -rf /` -> `rm -rf /`: the command a runner word runs."""
    words = part.split(" ")
    while words and (words[0] in _RUNNERS or words[0].startswith("-") or "=" in words[0]):
        words.pop(0)
    return " ".join(words)


def _every_part_allowed(
    subject: Subject, allowing: tuple[Rule, ...], root: Path
) -> tuple[Effect, Rule] | None:
    command = subject.command or ""
    parts = simple_commands(command)
    if not parts or len(parts) < 2 or not _plain_command(command):
        return None
    first: Rule | None = None
    for part in parts:
        single = Subject(subject.tool, command=part)
        rule = next((r for r in allowing if r.matches(single, root, every=True)), None)
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
    """The rule key `s` grants for a bash command: its prefix when it is one simple command
    (`git status *`, `npm test *` for programs with subcommands, `ls *` for the others),
    else exactly this command line."""
    parts = simple_commands(command)
    if parts is not None and len(parts) == 1 and _plain_command(command):
        words = parts[0].split(" ")
        prefix = words[:1]
        if len(words) > 1 and words[0] in _WITH_SUBCOMMANDS and _PLAIN_WORD.match(words[1]):
            prefix.append(words[1])
        if all(_PLAIN_WORD.match(w) or w.startswith(("/", "./")) for w in prefix) and not any(
            c in w for w in prefix for c in "*?["
        ):
            text = " ".join(prefix)
            return Rule("bash", f"{text} *", f"bash({text} *)")
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
