"""Turning a path written by a model into the file it means.

Paths are relative to the directory mm-tui was started in (SPEC §4); absolute paths and `~`
are honoured. Small models often wrap a path in backticks or quotes, or pad it with spaces:
those wrappers are removed, since no real file name in a project looks like that.

What the person approves must be what is touched: a path holding a control
character (NUL, a newline) is refused, never cleaned into another path, and `..` is resolved
as the kernel would — through the folder before it, which must exist — not by text
(`name\\n/../..` is not `.`). Shown paths are escaped (`visible`) and absolute.
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path

from mm_tui.agent.tools.arguments import ArgumentProblem, lenient_string
from mm_tui.support.terminal_text import quoted, visible

_WRAPPERS = ("`", '"', "'")
CONTROL_IN_PATH = (
    "[error: the path {path} contains a control character ({char}); no file is named like "
    "that — give the path exactly]"
)
DOTDOT_AFTER_NOTHING = (
    "[error: the path {path} goes up (..) out of {folder}, which is not a folder; "
    "give the path without ..]"
)
OUTSIDE_MARK = "outside the project"


class PathProblem(ArgumentProblem):
    """A path that names no file the kernel would open; the message is the tool's output."""


def clean_path_text(raw: str) -> str:
    """The path as the model meant it: spaces and one pair of surrounding quotes removed."""
    text = raw.strip()
    for wrapper in _WRAPPERS:
        if len(text) >= 2 and text.startswith(wrapper) and text.endswith(wrapper):
            return text[1:-1].strip()
    return text


def resolve_path(cwd: Path, raw: str) -> Path:
    """The absolute path of `raw` against `cwd`; links kept, except that `..` goes up from
    where the kernel would be (the real folder). PathProblem for a path no kernel opens."""
    text = os.path.expanduser(clean_path_text(raw))
    bad = next((c for c in text if unicodedata.category(c) == "Cc"), None)
    if bad is not None:
        shown = quoted(text)
        char = visible(bad, keep_newlines=False)
        raise PathProblem(CONTROL_IN_PATH.format(path=shown, char=char))
    joined = text if os.path.isabs(text) else os.path.join(cwd, text)
    parts = joined.split("/")
    if ".." not in parts:
        return Path(os.path.normpath(joined))
    last = len(parts) - 1 - parts[::-1].index("..")
    for index, part in enumerate(parts[: last + 1]):
        if part == "..":
            folder = "/".join(parts[:index]) or "/"
            if not os.path.isdir(folder):
                shown = quoted(text)
                folder_shown = quoted(folder)
                raise PathProblem(DOTDOT_AFTER_NOTHING.format(path=shown, folder=folder_shown))
    head = os.path.realpath("/".join(parts[: last + 1]) or "/")
    rest = "/".join(parts[last + 1 :])
    return Path(os.path.normpath(os.path.join(head, rest)) if rest else head)


def is_inside(path: Path, root: Path) -> bool:
    """Whether `path`, links followed, is inside the project `root`."""
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base.rstrip("/") + "/")


def shown_location(path: Path, root: Path) -> str:
    """The absolute path as the question shows it, escaped, marked outside the project."""
    text = visible(str(path), keep_newlines=False)
    return text if is_inside(path, root) else f"{text}  ⚠ {OUTSIDE_MARK}"


def path_title(tool: str, args: object) -> str:
    """A file tool's row title: `write_file src/a.py` (escaped: hides nothing)."""
    shown = visible(clean_path_text(lenient_string(args, "path")), keep_newlines=False)
    return f"{tool} {shown}".rstrip()
