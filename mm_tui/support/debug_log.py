"""The debug log: off by default; `--debug` or `MM_DEBUG=1` writes it under the XDG state dir.

Every module logs through `logging.getLogger(__name__)` (all under `mm_tui`). Nothing reaches
the terminal: with the log off, the `mm_tui` logger has a NullHandler and does not propagate,
so Python's last-resort handler never prints over the window. Swallowed exceptions are logged
with their traceback (`log.debug(..., exc_info=True)` or `log.exception`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path

from mm_tui.support.paths import state_dir

ROOT_LOGGER = "mm_tui"
DEBUG_ENV = "MM_DEBUG"
LOG_FORMAT = "%(asctime)s %(levelname)s %(threadName)s %(name)s: %(message)s"

_root = logging.getLogger(ROOT_LOGGER)
_root.addHandler(logging.NullHandler())
_root.propagate = False


def debug_requested(flag: bool, env: Mapping[str, str] | None = None) -> bool:
    """`--debug`, or `MM_DEBUG` set to anything but empty, 0, false or no."""
    value = (os.environ if env is None else env).get(DEBUG_ENV, "")
    return flag or value.strip().lower() not in ("", "0", "false", "no")


def default_log_path() -> Path:
    return state_dir() / "debug.log"


def enable_debug_log(path: Path | None = None) -> Path:
    """Append every record of mm-tui's loggers to `path`; returns where it writes."""
    target = path or default_log_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(target, encoding="utf-8")
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    _root.addHandler(handler)
    _root.setLevel(logging.DEBUG)
    os.chmod(target, 0o600)  # it may hold file contents and server answers
    return target
