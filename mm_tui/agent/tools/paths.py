"""Turning a path written by a model into the file it means.

Paths are relative to the directory mm-tui was started in (SPEC §4); absolute paths and `~`
are honoured. Small models often wrap a path in backticks or quotes, or pad it with spaces:
those wrappers are removed, since no real file name in a project looks like that.
"""

from __future__ import annotations

import os
from pathlib import Path

from mm_tui.agent.tools.arguments import lenient_string

_WRAPPERS = ("`", '"', "'")


def clean_path_text(raw: str) -> str:
    """The path as the model meant it: spaces and one pair of surrounding quotes removed."""
    text = raw.strip()
    for wrapper in _WRAPPERS:
        if len(text) >= 2 and text.startswith(wrapper) and text.endswith(wrapper):
            return text[1:-1].strip()
    return text


def resolve_path(cwd: Path, raw: str) -> Path:
    """The absolute path of `raw` against `cwd`, normalised (`a/../b` is `b`), links kept."""
    text = os.path.expanduser(clean_path_text(raw))
    joined = text if os.path.isabs(text) else os.path.join(cwd, text)
    return Path(os.path.normpath(joined))


def path_title(tool: str, args: object) -> str:
    """A file tool's row title: `write_file src/a.py`."""
    return f"{tool} {clean_path_text(lenient_string(args, 'path'))}".rstrip()
