"""The question a front asks once when a project's files would change how mm-tui works.

A project's config may set guarded keys (`agent/trust.py`) and its AGENTS.md would join the
model's instructions; until the person trusts the directory, neither is obeyed. The window
asks at start (headless only says how: `mm-tui trust`). What the question shows is read from
the very bytes whose hashes the answer records, so what is trusted is what was shown; a file
changed afterwards is simply untrusted again.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from mm_tui.agent import trust
from mm_tui.agent.project_instructions import AGENTS_FILE, approximate_tokens

log = logging.getLogger(__name__)

CONFIG_LINE = "{name} sets {keys}: not obeyed until you trust this directory"
AGENTS_LINE = "{name} ({tokens} tokens) would join the model's instructions"


@dataclass(frozen=True)
class TrustQuestion:
    """What the project would change, and the contents (hashes) an answer covers."""

    directory: Path
    lines: tuple[str, ...]
    hashes: tuple[tuple[str, str], ...]


def trust_question(
    cwd: Path,
    source: Path | None,
    untrusted: tuple[str, ...],
    env: Mapping[str, str] | None = None,
) -> TrustQuestion | None:
    """The question to ask, or None: nothing is held back, or the person already declined
    these exact contents. `source`, `untrusted`: the loaded config's file and held-back keys."""
    contents = _read(cwd)
    lines: list[str] = []
    if source is not None and untrusted and source.name in contents:
        keys = _guarded_keys(source, contents[source.name], untrusted)
        if keys:
            lines.append(CONFIG_LINE.format(name=source.name, keys=", ".join(keys)))
    agents = contents.get(AGENTS_FILE)
    if agents is not None and not trust.is_trusted(cwd / AGENTS_FILE, agents, env):
        tokens = approximate_tokens(len(agents.decode("utf-8", "replace").strip()))
        lines.append(AGENTS_LINE.format(name=AGENTS_FILE, tokens=tokens))
    hashes = {name: trust.content_hash(data) for name, data in contents.items()}
    if not lines or trust.was_declined(cwd, hashes, env):
        return None
    return TrustQuestion(cwd, tuple(lines), tuple(sorted(hashes.items())))


def accept(question: TrustQuestion, env: Mapping[str, str] | None = None) -> None:
    """Trust the directory with the contents the question showed."""
    trust.record(question.directory, dict(question.hashes), env)


def decline(question: TrustQuestion, env: Mapping[str, str] | None = None) -> None:
    """Remember the refusal: the question is not asked again for these contents."""
    trust.record(question.directory, dict(question.hashes), env, declined=True)


def _read(cwd: Path) -> dict[str, bytes]:
    """The files trust covers, each read once (regular files only)."""
    contents: dict[str, bytes] = {}
    for name in trust.TRUSTED_NAMES:
        path = cwd / name
        if path.is_file():
            try:
                contents[name] = path.read_bytes()
            except OSError:
                log.debug("cannot read %s", path, exc_info=True)
    return contents


def _guarded_keys(source: Path, data: bytes, untrusted: tuple[str, ...]) -> tuple[str, ...]:
    """The held-back keys as this content sets them (it may have changed since the load)."""
    from mm_tui.agent.config import ConfigError, parse_config_text

    try:
        config = parse_config_text(data.decode("utf-8"), source)
    except (ConfigError, UnicodeDecodeError):
        log.debug("%s changed into a file that does not load", source, exc_info=True)
        return ()
    lifted = tuple(key for key in trust.LOWER_ONLY if key in untrusted)
    return tuple(key for key in trust.GUARDED if key in config.file_keys) + lifted
