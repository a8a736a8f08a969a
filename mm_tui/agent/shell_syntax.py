"""A bash command read as bash reads it, for the permission rules (tree-sitter-bash).

`read_command` parses a command line with the tree-sitter bash grammar (the parser Codex uses
for its safe-command check) and says three things the rules need:
- `commands`: every simple command in it, nested ones too (inside `$(…)`, backquotes, `<(…)`,
  subshells, groups, functions, loops, here-documents), its words as bash passes them
  (quotes and backslashes removed, `$'…'` decoded); a word bash computes when it runs is kept
  as written.
- `plain`: nothing but simple commands of fixed words joined by `;`, `&&`, `||`, `|` or
  newlines, with only the redirections that write nowhere (`2>&1`, `>/dev/null` exactly).
  Only a plain command can be allowed by a rule; anything else (an unknown construct, a
  substitution, an expansion, an assignment, a function, a parse error) is asked.
- `runs`: what may run, for deny and ask rules: each command with its name's folder dropped
  (`/bin/rm` is `rm`), and what a wrapper runs (`sudo`, `env`, `command`, `exec`, `xargs`,
  `find -exec`, `bash -c '…'`, `eval '…'`, `trap '…'`, `alias x='…'`…), read again.
- `unsure`: why what runs cannot all be known before it runs (a command name computed when it
  runs, `eval "$x"`, a shell reading its commands from a pipe, a line bash cannot parse), "".

A backslash-newline joins lines everywhere but in quotes and comments; the grammar does not
always join them inside a word (`r\\⏎m`), so such a line is read both ways and both readings
count. Rules on commands stay a guard against mistakes, not a sandbox: a script or an
interpreter (`python3 -c`) runs what no rule can see.
"""

from __future__ import annotations

import functools
import os
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

#: Node kinds a plain command is made of (as Codex's `try_parse_word_only_commands_sequence`).
PLAIN_KINDS = frozenset(
    {
        "program",
        "list",
        "pipeline",
        "command",
        "command_name",
        "word",
        "string",
        "string_content",
        "raw_string",
        "number",
        "concatenation",
        "comment",
        "redirected_statement",
        "file_redirect",
        "file_descriptor",
    }
)
#: Unnamed tokens a plain command may hold: list and pipe operators, quotes, redirections
#: (each redirection is then checked on its own).
PLAIN_TOKENS = frozenset(
    {"&&", "||", ";", "|", "|&", "\n", '"', "'", ">", ">>", "&>", "&>>", ">&", ">|", "<", "<&"}
)
#: Words that run the command after them: deny and ask rules look past them.
WRAPPERS = frozenset(
    {
        "sudo", "doas", "run0", "pkexec", "runuser", "env", "exec", "command", "builtin", "nice",
        "nohup", "time", "timeout", "xargs", "stdbuf", "setsid", "ionice", "chrt", "taskset",
        "chroot", "unbuffer", "strace", "ltrace", "coproc", "busybox", "flock", "nsenter",
        "unshare", "systemd-run", "firejail", "proxychains", "proxychains4", "torsocks",
        "catchsegv", "valgrind", "watch", "parallel", "fakeroot", "faketime", "script",
    }
)  # fmt: skip
#: Programs whose `-c STRING` is shell code.
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh", "rbash"})
_WITH_COMMAND_OPTION = frozenset({"su", "script", "flock", "runuser"})  # `-c STRING`
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_EXPANDS = re.compile(r"(?<!\\)[*?\[{]")  # an unquoted glob or brace: bash makes other words
_MAX_RUNS = 256
_MAX_DEPTH = 6


@dataclass(frozen=True)
class Words:
    """One simple command: its words as bash passes them; `known`: its name is fixed before
    it runs (no expansion, substitution, glob or brace in it); `expands`: an argument is an
    unquoted glob or brace that bash turns into other words (file names)."""

    words: tuple[str, ...]
    known: bool = True
    expands: bool = False

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class Reading:
    """How bash reads a command line (see the module's text)."""

    commands: tuple[Words, ...]
    runs: tuple[tuple[str, ...], ...]
    plain: bool
    unsure: str = ""


_LOCK = threading.Lock()


@functools.cache
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


@functools.lru_cache(maxsize=512)
def read_command(command: str) -> Reading:
    """The command line as bash reads it (cached: the rules ask again for each rule)."""
    return _read(command, 0)


def _read(command: str, depth: int) -> Reading:
    readings = [_read_once(command, depth)]
    if "\\\n" in command or "\\\r\n" in command:  # joined where the grammar may not join
        joined = command.replace("\\\r\n", "").replace("\\\n", "")
        readings.append(_read_once(joined, depth))
    commands = tuple(dict.fromkeys(c for r in readings for c in r.commands))
    runs = tuple(dict.fromkeys(w for r in readings for w in r.runs))
    unsure = next((r.unsure for r in readings if r.unsure), "")
    return Reading(commands, runs, all(r.plain for r in readings), unsure)


class _Walk:
    def __init__(self, source: bytes, depth: int) -> None:
        self.source = source
        self.depth = depth
        self.commands: list[Words] = []
        self.runs: list[tuple[str, ...]] = []
        self.plain = True
        self.unsure = ""

    def doubt(self, reason: str) -> None:
        self.plain = False
        self.unsure = self.unsure or reason


def _read_once(command: str, depth: int) -> Reading:
    source = command.encode("utf-8", "surrogatepass")
    with _LOCK:  # one parser, used from the worker threads one at a time
        tree = _parser().parse(source)
    walk = _Walk(source, depth)
    root = tree.root_node
    if root.has_error:
        walk.doubt("bash cannot parse it")
    if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in command):
        walk.plain = False  # a control character: the grammar and bash may split it apart
    stack: list[Node] = [root]
    while stack:
        node = stack.pop()
        _visit(node, walk)
        stack.extend(reversed(node.children))
    return Reading(tuple(walk.commands), tuple(walk.runs), walk.plain, walk.unsure)


def _visit(node: Node, walk: _Walk) -> None:
    kind = node.type
    if node.is_missing or node.is_error:
        walk.doubt("bash cannot parse it")
    elif not node.is_named:
        if kind not in PLAIN_TOKENS:
            walk.plain = False
    elif kind not in PLAIN_KINDS:
        walk.plain = False
    elif kind == "command":
        _command(node, walk)
    elif kind == "file_redirect" and not _writes_nowhere(node, walk.source):
        walk.plain = False


def _command(node: Node, walk: _Walk) -> None:
    words: list[str] = []
    known = plain = True
    expands = False
    for child in node.named_children:
        kind = child.type
        if kind in ("file_redirect", "heredoc_redirect", "herestring_redirect"):
            continue
        if kind == "variable_assignment":
            plain = False  # `PATH=… ls`, `LD_PRELOAD=… ls`: not the command a rule names
            continue
        target = (
            child.named_children[0] if kind == "command_name" and child.named_children else child
        )
        text, fixed, literal = _word(target, walk.source)
        if kind == "command_name":
            known = fixed and not _EXPANDS.search(_text(target, walk.source))
            plain = plain and known and literal and not any(c.isspace() for c in text)
        else:
            plain = plain and fixed and literal
            expands = expands or (fixed and _unquoted_expands(target, walk.source))
        words.append(text)
    if not words:
        return
    if not known:
        walk.doubt("the command's name is computed when it runs")
    walk.plain = walk.plain and plain
    found = Words(tuple(words), known, expands)
    walk.commands.append(found)
    runs, reason = _runs(found.words, walk.depth)
    walk.runs.extend(runs)
    if reason:
        walk.doubt(reason)


def _text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", "surrogatepass")


def _word(node: Node, source: bytes) -> tuple[str, bool, bool]:
    """(the word as bash passes it, fixed before it runs, plain: no `$'…'` either)."""
    kind, text = node.type, _text(node, source)
    if kind == "word":
        fixed = not re.search(r"(?<!\\)[$`]", text)
        return _unescape(text), fixed, fixed
    if kind == "number":
        return text, True, True
    if kind == "raw_string":
        return text[1:-1], True, True
    if kind == "ansi_c_string":
        return _ansi_c(text[2:-1]), True, False
    if kind == "string":
        if any(part.type != "string_content" for part in node.named_children):
            return text, False, False
        return (
            re.sub(r'\\([$`"\\\n])', lambda m: "" if m[1] == "\n" else m[1], text[1:-1]),
            True,
            True,
        )
    if kind == "concatenation":
        parts = [_word(part, source) for part in node.named_children]
        if any(not part.is_named for part in node.children):
            return text, False, False  # `a$` and the like: a token the grammar left bare
        return "".join(p[0] for p in parts), all(p[1] for p in parts), all(p[2] for p in parts)
    return text, False, False


def _unquoted_expands(node: Node, source: bytes) -> bool:
    if node.type == "word":
        return bool(_EXPANDS.search(_text(node, source)))
    return node.type == "concatenation" and any(
        _unquoted_expands(part, source) for part in node.named_children
    )


def _unescape(word: str) -> str:
    return re.sub(r"\\(.)", lambda m: "" if m[1] == "\n" else m[1], word, flags=re.DOTALL)


_ANSI_C = re.compile(
    r"\\(?:x([0-9a-fA-F]{1,2})|u([0-9a-fA-F]{1,4})|U([0-9a-fA-F]{1,8})|([0-7]{1,3})|c(.)|(.))",
    re.DOTALL,
)
_ANSI_C_NAMED = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"} | {
    "r": "\r",
    "t": "\t",
    "v": "\v",
}


def _ansi_c(body: str) -> str:
    """`$'…'` as bash decodes it."""

    def one(match: re.Match[str]) -> str:
        hexa, short, long, octal, control, other = match.groups()
        number = hexa or short or long
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control:
            return chr(ord(control) & 0x1F)
        return _ANSI_C_NAMED.get(other, other)

    return _ANSI_C.sub(one, body)


def _writes_nowhere(node: Node, source: bytes) -> bool:
    """`2>&1`, `>&2`, `>/dev/null`, `2>>/dev/null`, `&>/dev/null`: exactly these shapes."""
    operators = [c.type for c in node.children if not c.is_named]
    targets = [c for c in node.named_children if c.type != "file_descriptor"]
    if len(operators) != 1 or len(targets) != 1:
        return False
    target, fixed, literal = _word(targets[0], source)
    if not (fixed and literal):
        return False
    if operators[0] in (">&", "<&"):
        return target.isdigit() or target == "-"
    return operators[0] in (">", ">>", "&>", "&>>", ">|") and target == "/dev/null"


def _runs(words: tuple[str, ...], depth: int) -> tuple[list[tuple[str, ...]], str]:
    """What these words may run: themselves with the name's folder dropped, and what the
    wrappers among them run; and why that cannot all be known, or ""."""
    name = os.path.basename(words[0]) or words[0]
    runs: list[tuple[str, ...]] = [(name, *words[1:])]
    if depth >= _MAX_DEPTH:
        return runs, "commands nested too deep to follow"
    args = words[1:]
    scripts: list[str] = []
    reason = ""
    if name in SHELLS:
        script = _option_value(args, "c")
        if script is not None:
            scripts.append(script)
        elif not any(not a.startswith("-") for a in args) or "-s" in args:
            reason = "a shell reads its commands from its input"
    elif name in ("eval", "trap") and args:
        scripts.append(" ".join(args) if name == "eval" else args[0])
    elif name == "alias":
        scripts.extend(a.partition("=")[2] for a in args if "=" in a)
    elif name in _WITH_COMMAND_OPTION and (script := _option_value(args, "c")) is not None:
        scripts.append(script)
    if name == "env":
        scripts.extend(_after(args, ("-S", "--split-string")))
    starts: list[int] = []
    if name in WRAPPERS or name in _WITH_COMMAND_OPTION:
        starts = [i for i, w in enumerate(args) if not w.startswith("-") and "=" not in w]
    elif name == "find":
        starts = [i + 1 for i, w in enumerate(args[:-1]) if w in _FIND_RUNS]
    for start in starts:
        nested, why = _runs(args[start:], depth + 1)
        runs.extend(nested)
        reason = reason or why
        if len(runs) > _MAX_RUNS:
            return runs, "too many ways to read it"
    for script in scripts:
        reading = _read(script, depth + 1)
        runs.extend(reading.runs)
        reason = reason or reading.unsure
    return runs, reason


def _option_value(args: tuple[str, ...], letter: str) -> str | None:
    """The word after `-c` (or `-lc`, `-ec`…): a shell's script."""
    for index, arg in enumerate(args):
        if arg.startswith("-") and not arg.startswith("--") and letter in arg[1:]:
            return args[index + 1] if index + 1 < len(args) else ""
        if arg == "--command" and index + 1 < len(args):
            return args[index + 1]
    return None


def _after(args: tuple[str, ...], options: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for index, arg in enumerate(args):
        if arg in options and index + 1 < len(args):
            found.append(args[index + 1])
        elif arg.startswith(options) and len(arg) > 2 and not arg.startswith("--"):
            found.append(arg[2:])
        elif arg.startswith("--split-string="):
            found.append(arg.partition("=")[2])
    return found
