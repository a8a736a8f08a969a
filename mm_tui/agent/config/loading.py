"""Which config file wins, and how file, environment and flags combine (SPEC §2).

The file is read here (bounded, regular files only, never a read that blocks); its YAML and
its keys are checked in `validation`, imported only when there is a file to check.
"""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mm_tui.agent.config.model import Config, ConfigError, settings
from mm_tui.support.paths import config_dir
from mm_tui.support.secret_env import person_environment

log = logging.getLogger(__name__)

#: A config file is a few hundred bytes; anything past this is not one (and is not parsed).
MAX_CONFIG_BYTES = 256 * 1024


def config_candidates(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The files looked up, in order, when no --config is given (SPEC §2)."""
    return [cwd / ".mm.yaml", cwd / "mm.yaml", config_dir(env) / "config.yaml"]


def find_config(explicit: Path | None, cwd: Path, env: Mapping[str, str]) -> Path | None:
    """The config file that wins, or None. An explicit path that does not exist is an error."""
    if explicit is not None:
        if not explicit.exists():
            raise ConfigError(f"config file {explicit} does not exist")
        return explicit
    return next((p for p in config_candidates(cwd, env) if p.exists()), None)


def load_config(
    explicit: Path | None = None,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """File, then environment, then CLI flags (`overrides`: Config field names)."""
    cwd = cwd or Path.cwd()
    env = person_environment() if env is None else env
    path = find_config(explicit, cwd, env)
    config = Config()
    if path is not None:
        text = read_config_text(path)
        config = parse_config_text(text, path)
        config = replace(config, rules_source=path)
        if explicit is None:
            config = _obeyed_if_trusted(config, path, text, cwd, env)
        config = _with_user_preferences(config, path, env)
    from_env: dict[str, Any] = {}
    if env.get("OPENAI_BASE_URL"):
        from_env["base_url"] = env["OPENAI_BASE_URL"]
    if env.get("OPENAI_API_KEY"):
        from_env["api_key"] = env["OPENAI_API_KEY"]
    if env.get("MM_MODEL"):
        from_env["model"] = env["MM_MODEL"]
    config = replace(config, **from_env)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    config = replace(config, **flags)
    log.debug("settings in effect: %r", config)  # its repr leaves the API key out
    return config


def _obeyed_if_trusted(
    config: Config, path: Path, text: str, cwd: Path, env: Mapping[str, str]
) -> Config:
    """A project config's guarded keys (`agent/trust.py`) fall back to the user's own config
    (or the defaults) until the person trusts the directory with this content."""
    from mm_tui.agent.trust import GUARDED, LOWER_ONLY, is_project_config, is_trusted

    keys = tuple(key for key in (*GUARDED, *LOWER_ONLY) if key in config.file_keys)
    if not keys or not is_project_config(path, cwd):
        return config
    if is_trusted(path, text.encode("utf-8", errors="surrogateescape"), env):
        return config
    user = config_dir(env) / "config.yaml"
    fallback = parse_config_file(user) if user.is_file() else Config()
    kept: dict[str, Any] = {
        name: getattr(fallback, name) for key in keys for name in GUARDED.get(key, ())
    }
    if "permissions" in keys:  # the rules that apply are the user's own (or none)
        kept["rules_source"] = user if user.is_file() else None
    lifted = [k for k in keys if k in LOWER_ONLY and _lifts(config, fallback, LOWER_ONLY[k])]
    kept.update({LOWER_ONLY[key]: getattr(fallback, LOWER_ONLY[key]) for key in lifted})
    untrusted = tuple(key for key in keys if key in GUARDED or key in lifted)
    return replace(config, **kept, untrusted=untrusted) if untrusted else config


def _lifts(config: Config, fallback: Config, name: str) -> bool:
    """Whether the project's limit is above the one that applies without it."""
    return getattr(config, name) > getattr(fallback, name)


#: Window preferences (YAML key -> Config field) that follow the person from project to
#: project: a file that does not set one takes it from the user's own config.
PREFERENCES: dict[str, str] = {
    declared.key: name for name, declared in settings() if declared.preference
}


def _with_user_preferences(config: Config, path: Path, env: Mapping[str, str]) -> Config:
    """The theme chosen in the window is saved in the user's config; a project's
    `.mm.yaml` (or `--config`) wins over that file but should not make the choice disappear.
    """
    missing = [key for key in PREFERENCES if key not in config.file_keys]
    user = config_dir(env) / "config.yaml"
    if not missing or not user.is_file() or user.resolve() == path.resolve():
        return config
    preferences = parse_config_file(user)
    kept = {PREFERENCES[key]: getattr(preferences, PREFERENCES[key]) for key in missing}
    return replace(config, **kept)


def parse_config_file(path: Path) -> Config:
    """Read and validate one YAML file; every problem names the file, the line and the key."""
    return parse_config_text(read_config_text(path), path)


def read_config_text(path: Path) -> str:
    """The file's text. A FIFO, device or socket is refused at once instead of blocking."""

    def fail(msg: str) -> ConfigError:
        return ConfigError(f"config error in {path}: {msg}")

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise fail(f"cannot read it ({exc.strerror})") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise fail("it is a directory, not a YAML file")
        if not stat.S_ISREG(mode):
            raise fail("not a regular file")
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_CONFIG_BYTES and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise fail(f"cannot read it ({exc.strerror})") from None
    finally:
        os.close(fd)
    if size > MAX_CONFIG_BYTES:
        raise fail(f"larger than {MAX_CONFIG_BYTES // 1024} KiB; not a config file")
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError:
        raise fail("not a text file (invalid UTF-8)") from None


def parse_config_text(text: str, path: Path) -> Config:
    """Validate YAML text; `path` is only used in messages and as `Config.source`."""
    from mm_tui.agent.config.validation import validate_config_text

    return validate_config_text(text, path)
