"""Trusted project configs: a cloned repository cannot lift your permissions.

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

`AGENTS.md` follows the same rule for what it may change. It can change no setting, no
permission and no server: it may only change what the model is told (it joins the system
prompt, with the authority of "follow them"), which is exactly what a project's
`systemPrompt` may not do untrusted. So it is used only once the directory is trusted with
that content; `mm-tui trust` and the window's question trust it with the configs. A refusal
in the window is remembered too (per directory and content), so the question comes once.
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
#: The project's files that trust covers: its configs and its instructions to the model.
TRUSTED_NAMES = (*PROJECT_CONFIG_NAMES, "AGENTS.md")
TRUST_FILE = "trusted-projects.json"
DECLINED_FILE = "declined-projects.json"
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
    # Turning it off puts the person's terminal within reach of every command.
    "fenceTerminals": ("fence_terminals",),
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


def current_hashes(directory: Path) -> dict[str, str]:
    """The content hash of each of the directory's files that trust covers, as they are now."""
    return {
        name: content_hash((directory / name).read_bytes())
        for name in TRUSTED_NAMES
        if (directory / name).is_file()
    }


def record(
    directory: Path,
    hashes: Mapping[str, str],
    env: Mapping[str, str] | None = None,
    *,
    declined: bool = False,
) -> None:
    """Remember that the person trusted (or declined) the directory with these contents."""
    table = _load(env, DECLINED_FILE if declined else TRUST_FILE)
    table[_real(directory)] = dict(hashes)
    data = json.dumps(table, indent=1, sort_keys=True).encode()
    write_atomically(
        _table_path(env, DECLINED_FILE if declined else TRUST_FILE), data, new_file_mode=0o600
    )


def was_declined(
    directory: Path, hashes: Mapping[str, str], env: Mapping[str, str] | None = None
) -> bool:
    """Whether the person already declined to trust the directory with these contents."""
    return _load(env, DECLINED_FILE).get(_real(directory)) == dict(hashes)


def trust(directory: Path, env: Mapping[str, str] | None = None) -> list[Path]:
    """Trust the directory's project configs and AGENTS.md as they are now; the files."""
    hashes = current_hashes(directory)
    if hashes:
        record(directory, hashes, env)
    return [directory / name for name in hashes]


def notice(path: Path, keys: tuple[str, ...]) -> str:
    """The start notice for keys an untrusted project config sets."""
    return NOTICE.format(path=path, keys=", ".join(keys), folder=path.parent)


def main(argv: list[str]) -> int:
    """`mm-tui trust [DIR]`: trust DIR's (default: here) project config as it is now."""
    directory = Path(argv[0]) if argv else Path.cwd()
    if len(argv) > 1 or argv[:1] in (["-h"], ["--help"]):
        print("usage: mm-tui trust [DIR]  (trust DIR's .mm.yaml, mm.yaml, AGENTS.md as they are)")
        return 0 if argv[:1] in (["-h"], ["--help"]) else 2
    try:
        trusted = trust(directory)
    except OSError as error:
        print(f"mm-tui: cannot record the trust: {error.strerror or error}", file=sys.stderr)
        return 1
    if not trusted:
        print(f"mm-tui: no .mm.yaml, mm.yaml or AGENTS.md in {directory}", file=sys.stderr)
        return 1
    for path in trusted:
        print(f"trusted {path} as it is now (a change must be trusted again)")
    return 0


def _real(path: Path) -> str:
    return os.path.realpath(path)


def _table_path(env: Mapping[str, str] | None, name: str = TRUST_FILE) -> Path:
    return data_dir(env) / name


def _load(env: Mapping[str, str] | None, name: str = TRUST_FILE) -> dict[str, dict[str, str]]:
    path = _table_path(env, name)
    try:
        table = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError):
        log.debug("the trust file %s cannot be read; nothing is trusted", path, exc_info=True)
        return {}
    return table if isinstance(table, dict) else {}
