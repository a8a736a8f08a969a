"""Configuration (SPEC §2): the typed object, its discovery, overrides and validation.

Importing this package is cheap: the `Config` object and the loader's entry points only.
YAML and msgspec are imported when a file is actually read (`parse_config_text`), because
the core and the window import `Config` at start-up.
"""

from __future__ import annotations

from mm_tui.agent.config.loading import (
    config_candidates,
    find_config,
    load_config,
    parse_config_file,
    parse_config_text,
)
from mm_tui.agent.config.model import DEFAULT_BASE_URL, Config, ConfigError

__all__ = [
    "DEFAULT_BASE_URL",
    "Config",
    "ConfigError",
    "config_candidates",
    "find_config",
    "load_config",
    "parse_config_file",
    "parse_config_text",
]
