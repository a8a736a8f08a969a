"""Where mm-tui keeps things, in one place: the XDG base directories (SPEC §2, §8).

Every path honours `XDG_CONFIG_HOME`, `XDG_DATA_HOME` and `XDG_STATE_HOME` when they are set
at the moment of the call, read from `env` when one is given (config discovery is tested with
its own environment). Not platformdirs: it follows each OS's own convention (`~/Library` on
macOS) where the spec fixes XDG paths everywhere, and it reads only `os.environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

APP_DIR = "mm"


def _base(env: Mapping[str, str] | None, variable: str, fallback: str) -> Path:
    environ = os.environ if env is None else env
    value = environ.get(variable)
    if value:
        return Path(value)
    home = environ.get("HOME")
    return (Path(home) if home else Path.home()) / fallback


def config_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/mm` (default `~/.config/mm`): the user's config."""
    return _base(env, "XDG_CONFIG_HOME", ".config") / APP_DIR


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/mm` (default `~/.local/share/mm`): sessions, prompt history."""
    return _base(env, "XDG_DATA_HOME", ".local/share") / APP_DIR


def state_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_STATE_HOME/mm` (default `~/.local/state/mm`): the debug log."""
    return _base(env, "XDG_STATE_HOME", ".local/state") / APP_DIR
