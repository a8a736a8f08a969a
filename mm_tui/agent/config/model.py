"""The configuration object every part of mm-tui reads, and the error a bad file raises.

Each setting is declared once, as a field of `Config`: its YAML key, type, default, bounds and
the words a wrong value is told (`setting(...)`). The file's checks (`validation`), its shape
(`schema.file_types`), the preferences that follow the person (`loading`) and the settings a
debug log shows (`Config.__repr__`) are all read from these declarations.

Kept free of YAML and msgspec so that importing it costs nothing at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Literal, TypeVar, cast

from mm_tui.lsp.spec import LspServerSpec
from mm_tui.support.url_text import shown_url

DEFAULT_BASE_URL = "http://localhost:11434/v1"
#: A value longer than this is shortened where it is shown (an error line, the debug log).
SHOWN_CHARS = 60
FAMILIES = ("auto", "none", "qwen", "gemma", "mistral", "gpt-oss", "glm", "granite", "phi")
Desktop = Literal["off", "osc9", "osc777", "both"]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Setting:
    """What a config file may say about one `Config` field. A wrong value is told
    `expected {expected}, got {value}`; a number of the right type outside its bounds is told
    `expected {in_range}, ...` when `in_range` is given (else `expected` again)."""

    key: str  # the YAML key, camelCase as in mm
    expected: str
    above: float | None = None  # the value must be > this
    at_least: float | None = None  # >= this
    at_most: float | None = None  # <= this
    in_range: str | None = None
    choices: tuple[str, ...] = ()  # the strings it may be (else: the field's own type)
    not_empty: bool = False  # a string of at least one character
    #: The file's value has a shape of its own (`schema.SHAPES[key]`), which `validation`
    #: reads into the field (rules, server specs, key choices, notifications).
    shaped: bool = False
    #: A window preference: a file that leaves it out takes the user's own (`loading`).
    preference: bool = False
    hidden: bool = False  # never shown (the API key)


def setting(
    key: str,
    default: _T,
    expected: str,
    *,
    above: float | None = None,
    at_least: float | None = None,
    at_most: float | None = None,
    in_range: str | None = None,
    choices: tuple[str, ...] = (),
    not_empty: bool = False,
    shaped: bool = False,
    preference: bool = False,
    hidden: bool = False,
) -> _T:
    """A `Config` field read from the file's `key` (the rest: `Setting`)."""
    declared = Setting(
        key, expected, above, at_least, at_most, in_range, choices, not_empty, shaped,
        preference, hidden,
    )  # fmt: skip
    return cast("_T", field(default=default, metadata={"setting": declared}))


def settings() -> list[tuple[str, Setting]]:
    """Every setting, in the order of the file's keys: (field name, its declaration)."""
    return [(f.name, f.metadata["setting"]) for f in fields(Config) if "setting" in f.metadata]


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 1]}…"


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
    desktop: Desktop = "osc9"


class ConfigError(Exception):
    """A configuration problem, already phrased as the lines the person reads.

    `problems` holds one complete line per problem (file, line, key, what is wrong); a file
    with several mistakes reports all of them at once, so one run shows everything to fix.
    """

    def __init__(self, *problems: str) -> None:
        super().__init__("\n".join(problems))
        self.problems: tuple[str, ...] = problems


POSITIVE = "a positive number"


@dataclass(frozen=True)
class Config:
    """Every key of SPEC §2, with its default. Built by `load_config`, never mutated."""

    base_url: str = setting("baseURL", DEFAULT_BASE_URL, "a URL string")
    api_key: str = setting("apiKey", "none", "a string", hidden=True)
    model: str | None = setting("model", None, "a string")
    #: OpenAI's range; NaN and infinity fail it (every request would fail).
    temperature: float | None = setting(
        "temperature", None, "a number", at_least=0, at_most=2, in_range="a number from 0 to 2"
    )
    #: Sampling beside the temperature (unset: the model family's, else the server's).
    top_p: float | None = setting("topP", None, "a fraction between 0 and 1", at_least=0, at_most=1)
    top_k: int | None = setting("topK", None, "a whole number of tokens (0: off)", at_least=0)
    min_p: float | None = setting("minP", None, "a fraction between 0 and 1", at_least=0, at_most=1)
    #: The model family whose defaults apply (agent/model_family.py): "auto" reads it from
    #: the model id, "none" keeps the plain defaults, a family name forces that one.
    family: str = setting(
        "family",
        "auto",
        '"auto", "none", or one of qwen, gemma, mistral, gpt-oss, glm, granite, phi',
        choices=FAMILIES,
    )
    context_window: int | None = setting(
        "contextWindow", None, "a whole number of tokens", above=0, in_range=POSITIVE
    )
    bash_tool: bool = setting("bashTool", True, "true or false")
    edit_tools: bool = setting("editTools", True, "true or false")
    skills_dir: str = setting("skillsDir", ".mm/skills", "a directory path")
    max_output: int = setting(
        "maxOutput", 10_000, "a whole number of characters", above=0, in_range=POSITIVE
    )
    preview_lines: int = setting(
        "previewLines", 12, "a whole number of lines", above=0, in_range=POSITIVE
    )
    #: `ask` or `allow`; the file may give rules instead (`allow_rules`...), which mean `ask`.
    permissions: Literal["ask", "allow"] = setting(
        "permissions",
        "ask",
        '"ask" or "allow", or rules {allow: [...], ask: [...], deny: [...]}',
        shaped=True,
    )
    yolo: bool = setting("yolo", False, "true or false")
    max_turns: int = setting("maxTurns", 40, "a whole number", above=0, in_range=POSITIVE)
    system_prompt: str | None = setting("systemPrompt", None, "a string")
    system_prompt_file: str | None = setting("systemPromptFile", None, "a file path")
    #: How tool calls travel: native `tools=`, described in the prompt and parsed ("text"), or
    #: native until the server says the model cannot (docs/decisions/0005-text-protocol.md).
    tool_calls: Literal["auto", "native", "text"] = setting(
        "toolCalls", "auto", '"auto", "native" or "text"'
    )
    #: Fraction of the context window at which /compact runs by itself (0 disables it).
    auto_compact: float = setting(
        "autoCompact", 0.75, "a fraction between 0 and 1", at_least=0, at_most=1
    )
    #: None when the user's config has no `lsp` section: the built-in defaults apply (SPEC §6);
    #: `lsp:` left empty: no servers.
    lsp_servers: tuple[LspServerSpec, ...] | None = setting(
        "lsp", None, "a mapping with a `servers` key", shaped=True
    )
    #: Permission rules (`agent/rules.py`), from the file's `permissions` rules: `bash(git *)`,
    #: `write_file(src/**)`; deny wins.
    allow_rules: tuple[str, ...] = ()
    ask_rules: tuple[str, ...] = ()
    deny_rules: tuple[str, ...] = ()
    #: At most this many tool calls of one model message run; the rest answer "not run".
    max_tool_calls: int = setting(
        "maxToolCalls", 32, "a whole number of tool calls", above=0, in_range=POSITIVE
    )
    #: Processes one bash command may add (RLIMIT_NPROC; a fork bomb stops there).
    max_processes: int = setting("maxProcesses", 512, "a whole number of processes", above=0)
    #: Seconds a bash command may run (the seed's 30 s), and the most one call may ask for
    #: with its `timeout` argument (ten minutes, as Claude Code and OpenCode allow). At least a
    #: second, at most a day (a typo of minutes for seconds fits).
    bash_timeout: float = setting(
        "bashTimeout", 30.0, "a number of seconds, like 30", at_least=1, at_most=86_400,
        in_range="a number of seconds from 1 to 86400",
    )  # fmt: skip
    bash_timeout_max: float = setting(
        "bashTimeoutMax", 600.0, "a number of seconds, like 600", at_least=1, at_most=86_400,
        in_range="a number of seconds from 1 to 86400",
    )  # fmt: skip
    #: Commands kept off every terminal device (yours, and any new pseudo-terminal) where the
    #: kernel has Landlock (docs/decisions/0009-terminal-out-of-reach.md). False lets `script`,
    #: `expect`, a new tmux server or pty tests run, at the price of your terminal by name.
    fence_terminals: bool = setting("fenceTerminals", True, "true or false")
    #: Environment variables removed for bash and language servers, beyond the built-in
    #: `*_API_KEY`, `*_TOKEN`, `*_SECRET` (names or patterns).
    scrub_env: tuple[str, ...] = setting(
        "scrubEnv", (), "a list of environment variable names or patterns like *_PASSWORD"
    )
    #: Window preferences: the Textual theme (None: Textual's default), keys remapped by
    #: binding id, and notifications. Set from the user's config too when the winning file
    #: leaves them out (`loading._with_user_preferences`).
    theme: str | None = setting(
        "theme", None, "a theme name, like textual-dark or nord", not_empty=True, preference=True
    )
    keymap: tuple[KeyChoice, ...] = setting(
        "keymap",
        (),
        "a mapping of binding ids to keys, like app.help: f5",
        shaped=True,
        preference=True,
    )
    notifications: Notifications = setting(
        "notifications",
        Notifications(),
        "true or false, or {bell: true, desktop: osc9}",
        shaped=True,
        preference=True,
    )
    source: Path | None = field(default=None, compare=False)
    #: The file the permission rules above were read from (for `/permissions`).
    rules_source: Path | None = field(default=None, compare=False)
    #: The YAML keys the file set (for the trust rules of `agent/trust.py`).
    file_keys: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    #: Keys of an untrusted project config that were not obeyed (`agent/trust.py`).
    untrusted: tuple[str, ...] = field(default=(), compare=False)

    def __repr__(self) -> str:
        """The settings that differ from their defaults, by YAML key (what a debug log shows);
        the API key never, the base URL without its password."""
        default = Config()
        shown_settings = [
            f"{declared.key}={shown(shown_url(value) if name == 'base_url' else value)}"
            for name, declared in settings()
            if not declared.hidden and (value := getattr(self, name)) != getattr(default, name)
        ]
        return f"Config({', '.join([*shown_settings, f'source={self.source}'])})"
