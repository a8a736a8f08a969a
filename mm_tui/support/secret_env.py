"""The environment a command or a language server gets: the person's, minus their secrets.

A model can run `env` or `printenv`, and a language server's plugins read whatever they like;
neither needs the API key. Variables named like secrets (`*_API_KEY`, `*_TOKEN`, `*_SECRET`,
`*_PASSWORD`, plus the names or patterns the config's `scrubEnv` adds) and any variable whose
value is a secret this process knows (the configured API key, under whatever name) are left
out of the environment of bash commands and language servers.
"""

from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Iterable, Mapping

DEFAULT_PATTERNS: tuple[str, ...] = ("*_API_KEY", "*_TOKEN", "*_SECRET", "*_PASSWORD")
#: Short values are never treated as secrets by value: `none`, `1`, `true` are everywhere.
_MIN_SECRET_VALUE = 8

_lock = threading.Lock()
_patterns: list[str] = list(DEFAULT_PATTERNS)
_values: set[str] = set()
#: Secret-named variables taken out of this process's environment at start (`hide_secrets`):
#: the config loader still reads them, nothing mm-tui starts inherits them by mistake.
_hidden: dict[str, str] = {}


def register_secrets(patterns: Iterable[str] = (), values: Iterable[str] = ()) -> None:
    """Add names or patterns (`MY_KEY`, `*_CREDENTIALS`) and secret values to scrub."""
    with _lock:
        _patterns.extend(p for p in patterns if p and p not in _patterns)
        _values.update(v for v in values if v and len(v) >= _MIN_SECRET_VALUE)


def is_secret(name: str, value: str) -> bool:
    """Whether this variable is left out of a child's environment."""
    upper = name.upper()
    with _lock:
        if any(fnmatch.fnmatchcase(upper, pattern.upper()) for pattern in _patterns):
            return True
        return value in _values


def scrubbed_environment(
    environ: Mapping[str, str] | None = None, extra: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`environ` (default: this process's) without secrets, then `extra` on top."""
    source = os.environ if environ is None else environ
    kept = {name: value for name, value in source.items() if not is_secret(name, value)}
    kept.update(extra or {})
    return kept


def hide_secrets() -> set[str]:
    """Move the variables named like secrets out of `os.environ` (and the C environment) into
    a private table; returns their names. The process's own start block is left to
    `support.process_hardening`."""
    names = {name for name, value in os.environ.items() if is_secret(name, value)}
    with _lock:
        for name in names:
            _hidden[name] = os.environ.pop(name)
    return names


def person_environment() -> dict[str, str]:
    """The environment mm-tui was started with, hidden secrets included: what the config
    file's overrides (`OPENAI_API_KEY`) are read from."""
    with _lock:
        return {**os.environ, **_hidden}


def restore_hidden() -> None:
    """Put the hidden variables back into `os.environ`, for a face whose children are mm-tui
    windows that need them (`mm-tui serve`)."""
    with _lock:
        os.environ.update(_hidden)
