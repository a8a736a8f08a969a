"""The configuration object every part of mm-tui reads, and the error a bad file raises.

Kept free of YAML and msgspec so that importing it costs nothing at start-up; the defaults
of SPEC §2 are written here once (the file schema leaves a key it did not see unset).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from mm_tui.lsp.spec import LspServerSpec
from mm_tui.support.url_text import shown_url

DEFAULT_BASE_URL = "http://localhost:11434/v1"


@dataclass(frozen=True)
class KeyChoice:
    """One `keymap` entry: a binding id, the keys given to it (`ctrl+k` or `f5,ctrl+h`), and
    its line in the file, so the window can name the line when the id or a key is wrong."""

    binding_id: str
    keys: str
    line: int = 0


@dataclass(frozen=True)
class Notifications:
    """`notifications`: what the window does when a turn ends or a question waits while the
    terminal is unfocused: ring the bell, and send a desktop-notification escape."""

    bell: bool = True
    desktop: Literal["off", "osc9", "osc777", "both"] = "osc9"


class ConfigError(Exception):
    """A configuration problem, already phrased as the lines the person reads.

    `problems` holds one complete line per problem (file, line, key, what is wrong); a file
    with several mistakes reports all of them at once, so one run shows everything to fix.
    """

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = problems


@dataclass(frozen=True)
class Config:
    """Every key of SPEC §2, with its default. Built by `load_config`, never mutated."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str = "none"
    model: str | None = None
    temperature: float | None = None
    #: Sampling beside the temperature (unset: the model family's, else the server's).
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    #: The model family whose defaults apply (agent/model_family.py): "auto" reads it from
    #: the model id, "none" keeps the plain defaults, a family name forces that one.
    family: str = "auto"
    context_window: int | None = None
    bash_tool: bool = True
    edit_tools: bool = True
    skills_dir: str = ".mm/skills"
    max_output: int = 10_000
    preview_lines: int = 12
    permissions: Literal["ask", "allow"] = "ask"
    yolo: bool = False
    max_turns: int = 40
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    #: How tool calls travel: native `tools=`, described in the prompt and parsed ("text"), or
    #: native until the server says the model cannot (docs/decisions/0005-text-protocol.md).
    tool_calls: Literal["auto", "native", "text"] = "auto"
    #: Fraction of the context window at which /compact runs by itself (0 disables it).
    auto_compact: float = 0.75
    #: None when the user's config has no `lsp` section: the built-in defaults apply (SPEC §6).
    lsp_servers: tuple[LspServerSpec, ...] | None = None
    #: Permission rules (`agent/rules.py`): `bash(git *)`, `write_file(src/**)`; deny wins.
    allow_rules: tuple[str, ...] = ()
    ask_rules: tuple[str, ...] = ()
    deny_rules: tuple[str, ...] = ()
    #: At most this many tool calls of one model message run; the rest answer "not run".
    max_tool_calls: int = 32
    #: Processes one bash command may add (RLIMIT_NPROC; a fork bomb stops there).
    max_processes: int = 512
    #: Seconds a bash command may run (the seed's 30 s), and the most one call may ask for
    #: with its `timeout` argument (ten minutes, as Claude Code and OpenCode allow).
    bash_timeout: float = 30.0
    bash_timeout_max: float = 600.0
    #: Environment variables removed for bash and language servers, beyond the built-in
    #: `*_API_KEY`, `*_TOKEN`, `*_SECRET` (names or patterns).
    scrub_env: tuple[str, ...] = ()
    #: Window preferences: the Textual theme (None: Textual's default), keys
    #: remapped by binding id, and notifications. Set from the user's config too when the
    #: winning file leaves them out (`loading._with_user_preferences`).
    theme: str | None = None
    keymap: tuple[KeyChoice, ...] = ()
    notifications: Notifications = Notifications()
    source: Path | None = field(default=None, compare=False)
    #: The file the permission rules above were read from (for `/permissions`).
    rules_source: Path | None = field(default=None, compare=False)
    #: The YAML keys the file set (for the trust rules of `agent/trust.py`).
    file_keys: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    #: Keys of an untrusted project config that were not obeyed (`agent/trust.py`).
    untrusted: tuple[str, ...] = field(default=(), compare=False)

    def __repr__(self) -> str:  # the API key never reaches a log
        return f"Config(base_url={shown_url(self.base_url)!r}, model={self.model!r}, source={self.source})"
