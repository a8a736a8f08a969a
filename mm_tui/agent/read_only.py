"""Commands that only read: the only ones key `s` allows by prefix for the session.

A person who answers `s` to `python3 --version` has not seen `python3 -c '…'`; to `rm -rf
build` has not seen `rm -rf ~`. So a session grant covers exactly the command that was shown,
except for the short list below of programs that read and write nothing (with the options
that would make them run or write something left out): for those, `s` on `ls -la` allows
`ls` with any arguments. Interpreters, shells and everything not listed: exactly the command.
"""

from __future__ import annotations

from mm_tui.agent.shell_syntax import Words

#: Programs that read and write nothing, whatever their arguments (but those below).
READ_ONLY = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "find", "pwd",
        "echo", "true", "false", "stat", "du", "df", "which", "diff", "cmp", "basename",
        "dirname", "realpath", "readlink", "whoami", "uname", "git",
    }
)  # fmt: skip
#: git's subcommands that read only; `git` alone is not granted by prefix.
GIT_READ_ONLY = frozenset({"status", "diff", "log", "show", "blame", "ls-files", "rev-parse"})
#: find's actions that run a program or write a file.
_FIND_ACTS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
#: Long options that run a program or write a file; git and GNU tools take any unambiguous
#: abbreviation (`--out=x`), so a word that starts one of them is refused.
_LONG_OPTIONS = {"git": ("--output", "--ext-diff", "--exec"), "rg": ("--pre",)}


def read_only_prefix(command: Words) -> tuple[str, ...] | None:
    """`("ls",)`, `("git", "status")`: the prefix a grant may cover when this command only
    reads; None when it may run or write something (or expands a glob into options)."""
    words = command.words
    if not command.known or command.expands or not words or words[0] not in READ_ONLY:
        return None
    name, args = words[0], words[1:]
    prefix: tuple[str, ...] = (name,)
    if name == "git":
        if not args or args[0] not in GIT_READ_ONLY:
            return None
        prefix, args = (name, args[0]), args[1:]
    if name == "find" and any(arg in _FIND_ACTS for arg in args):
        return None
    for arg in args:
        option = arg.partition("=")[0]
        if len(option) > 2 and any(full.startswith(option) for full in _LONG_OPTIONS.get(name, ())):
            return None
    return prefix
