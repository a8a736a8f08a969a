"""Trusted project configs: a cloned repository cannot lift your permissions (issue 11).

A project's `./.mm.yaml` or `./mm.yaml` comes with the code, written by whoever wrote the
repository. Until the person trusts that directory, the keys that decide what runs without
asking, where the conversation goes or what the model is told (`permissions`, `yolo`,
`baseURL`, `apiKey`, `lsp` servers' commands, the system prompt, the skills folder, and the
`keymap`, which decides what the question's keys answer) are not obeyed: they keep the user's
own config's values (or the defaults), and a start notice says so. Limits (`maxProcesses`,
the per-command process limit) may be lowered, never lifted. `mm-tui trust` trusts the
directory's config as it is now: trust is remembered per directory and content hash under
the XDG data dir, so a changed file must be trusted again.
The user's own config, `--config` and flags always apply.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
from collections.abc import Mapping
from pathlib import Path

from mm_tui.support.atomic_write import write_atomically
from mm_tui.support.paths import data_dir

log = logging.getLogger(__name__)

PROJECT_CONFIG_NAMES = (".mm.yaml", "mm.yaml")
TRUST_FILE = "trusted-projects.json"
#: YAML key -> the Config fields it sets, for the keys an untrusted project may not set.
GUARDED: dict[str, tuple[str, ...]] = {
    "permissions": ("permissions", "allow_rules", "ask_rules", "deny_rules"),
    "yolo": ("yolo",),
    "baseURL": ("base_url",),
    "apiKey": ("api_key",),
    "lsp": ("lsp_servers",),
    "systemPrompt": ("system_prompt",),
    "systemPromptFile": ("system_prompt_file",),
    "skillsDir": ("skills_dir",),
    # Keys decide what a/s/r answer: a project could swap "reject" and "allow for the session".
    "keymap": ("keymap",),
}
#: Limits an untrusted project may lower but never lift (a clone must not lift the
#: fork-bomb limit): YAML key -> the Config field.
LOWER_ONLY: dict[str, str] = {"maxProcesses": "max_processes"}
NOTICE = (
    "{path} sets {keys}: not obeyed until you trust this directory (run `mm-tui trust` in {folder})"
)


def is_project_config(path: Path, cwd: Path) -> bool:
    """Whether `path` is one of the directory's own config files (not the user's)."""
    return path.name in PROJECT_CONFIG_NAMES and _real(path.parent) == _real(cwd)


def content_hash(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def is_trusted(path: Path, data: bytes, env: Mapping[str, str] | None = None) -> bool:
    """Whether the person trusted this directory with exactly this content."""
    entry = _load(env).get(_real(path.parent), {})
    return isinstance(entry, dict) and entry.get(path.name) == content_hash(data)


def trust(directory: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Trust the directory's project configs as they are now; the files trusted."""
    trusted: list[Path] = []
    table = _load(env)
    entry: dict[str, str] = {}
    for name in PROJECT_CONFIG_NAMES:
        path = directory / name
        if path.is_file():
            entry[name] = content_hash(path.read_bytes())
            trusted.append(path)
    if trusted:
        table[_real(directory)] = entry
        data = json.dumps(table, indent=1, sort_keys=True).encode()
        write_atomically(_trust_file(env), data, new_file_mode=0o600)
    return trusted


def notice(path: Path, keys: tuple[str, ...]) -> str:
    """The start notice for keys an untrusted project config sets."""
    return NOTICE.format(path=path, keys=", ".join(keys), folder=path.parent)


def main(argv: list[str]) -> int:
    """`mm-tui trust [DIR]`: trust DIR's (default: here) project config as it is now."""
    directory = Path(argv[0]) if argv else Path.cwd()
    if len(argv) > 1 or argv[:1] in (["-h"], ["--help"]):
        print("usage: mm-tui trust [DIR]  (trust DIR's .mm.yaml / mm.yaml as it is now)")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        trusted = trust(directory)
    except OSError as error:
        print(f"mm-tui: cannot record the trust: {error.strerror or error}", file=sys.stderr)
        return 1
    if not trusted:
        print(f"mm-tui: no .mm.yaml or mm.yaml in {directory}", file=sys.stderr)
        return 1
    for path in trusted:
        print(f"trusted {path} as it is now (a change must be trusted again)")
    return 0


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _trust_file(env: Mapping[str, str] | None) -> Path:
    return data_dir(env) / TRUST_FILE


def _load(env: Mapping[str, str] | None) -> dict[str, dict[str, str]]:
    path = _trust_file(env)
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.debug("the trust file %s cannot be read; nothing is trusted", path, exc_info=True)
        return {}
    return table if isinstance(table, dict) else {}
