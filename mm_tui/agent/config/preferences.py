"""Saving a preference chosen in the window (the theme) into the user's own config.

The file is the person's: the change is made on its text, one top-level line replaced (or
added at the end), so their other keys, comments, order and spacing stay as they wrote them. A
YAML round trip through a library would drop the comments. The result is parsed before it is
written: a file the edit would break (flow style `{model: x}`, a block scalar) is left alone
and the reason said. The write is atomic (`write_atomically`), a symbolic link stays a link,
and a read-only file is refused rather than replaced.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path

from mm_tui.agent.config.loading import read_config_text
from mm_tui.agent.config.model import ConfigError
from mm_tui.support.atomic_write import write_atomically
from mm_tui.support.paths import config_dir

USER_CONFIG_MODE = 0o600  # it may hold an apiKey
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class PreferenceNotSaved(Exception):
    """The preference could not be written; the message is one line for the person."""


def user_config_path(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/mm/config.yaml` (SPEC §2's last candidate)."""
    return config_dir(env) / "config.yaml"


def with_top_level_key(text: str, key: str, value: str) -> str:
    """`text` with `key: value` set at the top level: the key's line (and the indented lines
    that continue it) replaced where it is, else one line added at the end."""
    shown = value if _PLAIN.fullmatch(value) else json.dumps(value)  # JSON strings are YAML
    line = f"{key}: {shown}"
    lines = text.splitlines()
    start = re.compile(rf"{re.escape(key)}\s*:(\s|$)")
    for index, current in enumerate(lines):
        if start.match(current):
            end = index + 1
            while end < len(lines) and lines[end][:1] in (" ", "\t"):
                end += 1
            lines[index:end] = [line]
            return "\n".join(lines) + "\n"
    return text + ("" if text.endswith("\n") or not text else "\n") + line + "\n"


def save_preference(key: str, value: str, env: Mapping[str, str] | None = None) -> Path:
    """Write `key: value` into the user's config; the file's path. Raises PreferenceNotSaved."""
    from mm_tui.agent.config.loading import parse_config_text

    path = user_config_path(env)
    try:
        text = read_config_text(path) if path.exists() else ""
    except ConfigError as exc:
        raise PreferenceNotSaved(str(exc)) from None
    changed = with_top_level_key(text, key, value)
    try:
        parse_config_text(changed, path)
    except ConfigError as exc:
        first = str(exc).splitlines()[0]
        raise PreferenceNotSaved(
            f"{path} left as it is: the edit would not read back ({first})"
        ) from None
    try:
        write_atomically(path, changed.encode("utf-8"), new_file_mode=USER_CONFIG_MODE)
    except OSError as exc:
        raise PreferenceNotSaved(f"cannot write {path} ({exc.strerror or exc})") from None
    return path
