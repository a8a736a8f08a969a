"""Configuration (SPEC §2): the typed object, its discovery, overrides and validation.

A bad file stops start-up with one line naming the file, the line and the key (ConfigError);
the CLI prints it and exits with status 2.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import yaml

from mm_tui.lsp.spec import LspServerSpec

DEFAULT_BASE_URL = "http://localhost:11434/v1"


class ConfigError(Exception):
    """A configuration problem, already phrased as the one line the person reads."""


@dataclass(frozen=True)
class Config:
    """Every key of SPEC §2, with its default. Built by `load_config`, never mutated."""

    base_url: str = DEFAULT_BASE_URL
    api_key: str = "none"
    model: str | None = None
    temperature: float | None = None
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
    #: native until the server says the model cannot (issue 6).
    tool_calls: Literal["auto", "native", "text"] = "auto"
    #: Fraction of the context window at which /compact runs by itself (0 disables it).
    auto_compact: float = 0.75
    #: None when the user's config has no `lsp` section: the built-in defaults apply (SPEC §6).
    lsp_servers: tuple[LspServerSpec, ...] | None = None
    source: Path | None = field(default=None, compare=False)

    def __repr__(self) -> str:  # the API key never reaches a log
        return f"Config(base_url={self.base_url!r}, model={self.model!r}, source={self.source})"


# YAML key -> (Config field, expected type(s), description for the error line)
_KEYS: dict[str, tuple[str, tuple[type, ...], str]] = {
    "baseURL": ("base_url", (str,), "a URL string"),
    "apiKey": ("api_key", (str,), "a string"),
    "model": ("model", (str,), "a string"),
    "temperature": ("temperature", (int, float), "a number"),
    "contextWindow": ("context_window", (int,), "a whole number of tokens"),
    "bashTool": ("bash_tool", (bool,), "true or false"),
    "editTools": ("edit_tools", (bool,), "true or false"),
    "skillsDir": ("skills_dir", (str,), "a directory path"),
    "maxOutput": ("max_output", (int,), "a whole number of characters"),
    "previewLines": ("preview_lines", (int,), "a whole number of lines"),
    "permissions": ("permissions", (str,), '"ask" or "allow"'),
    "yolo": ("yolo", (bool,), "true or false"),
    "maxTurns": ("max_turns", (int,), "a whole number"),
    "systemPrompt": ("system_prompt", (str,), "a string"),
    "systemPromptFile": ("system_prompt_file", (str,), "a file path"),
    "toolCalls": ("tool_calls", (str,), '"auto", "native" or "text"'),
    "autoCompact": ("auto_compact", (int, float), "a fraction between 0 and 1"),
    "lsp": ("lsp_servers", (dict,), "a mapping with a `servers` key"),
}
_CHOICES = {"permissions": ("ask", "allow"), "toolCalls": ("auto", "native", "text")}
_POSITIVE = {"contextWindow", "maxOutput", "previewLines", "maxTurns"}
_SERVER_KEYS = {"command", "extensions", "initializationOptions", "settings", "rootMarkers"}


def config_candidates(cwd: Path, env: Mapping[str, str]) -> list[Path]:
    """The files looked up, in order, when no --config is given (SPEC §2)."""
    xdg = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME", "~")).expanduser() / ".config")
    return [cwd / ".mm.yaml", cwd / "mm.yaml", Path(xdg) / "mm" / "config.yaml"]


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
    env = os.environ if env is None else env
    path = find_config(explicit, cwd, env)
    config = parse_config_file(path) if path else Config()
    from_env: dict[str, Any] = {}
    if env.get("OPENAI_BASE_URL"):
        from_env["base_url"] = env["OPENAI_BASE_URL"]
    if env.get("OPENAI_API_KEY"):
        from_env["api_key"] = env["OPENAI_API_KEY"]
    if env.get("MM_MODEL"):
        from_env["model"] = env["MM_MODEL"]
    config = replace(config, **from_env)
    flags = {k: v for k, v in (overrides or {}).items() if v is not None}
    return replace(config, **flags)


def parse_config_file(path: Path) -> Config:
    """Read and validate one YAML file; every problem names the file, the line and the key."""
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise ConfigError(f"config error in {path}: it is a directory, not a YAML file") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config error in {path}: not a text file (invalid UTF-8)") from None
    except OSError as exc:
        raise ConfigError(f"config error in {path}: cannot read it ({exc.strerror})") from None
    return parse_config_text(text, path)


def parse_config_text(text: str, path: Path) -> Config:
    """Validate YAML text; `path` is only used in messages and as `Config.source`."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ConfigError(f"config error in {path}{where}: YAML syntax: {problem}") from None
    if data is None:
        return Config(source=path)
    if not isinstance(data, dict) or not isinstance(root, yaml.MappingNode):
        raise ConfigError(f"config error in {path} line 1: expected a mapping of keys (key: value)")
    lines = {k.value: k.start_mark.line + 1 for k, _ in root.value if isinstance(k.value, str)}
    values: dict[str, Any] = {"source": path}
    for key, value in data.items():
        line = lines.get(key, 1)

        def fail(msg: str, key: object = key, line: int = line) -> ConfigError:
            return ConfigError(f"config error in {path} line {line}: key {key!r}: {msg}")

        if key not in _KEYS:
            raise fail(f"unknown key (known keys: {', '.join(_KEYS)})")
        name, types, expected = _KEYS[key]
        if key == "lsp":
            values[name] = _parse_lsp(value, path, root)
            continue
        if value is None:
            continue
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise fail(f"expected {expected}, got {value!r}")
        if key in _CHOICES and value not in _CHOICES[key]:
            raise fail(f"expected {expected}, got {value!r}")
        if key in _POSITIVE and value <= 0:
            raise fail(f"expected a positive number, got {value!r}")
        if key == "autoCompact" and not 0 <= value <= 1:
            raise fail(f"expected {expected}, got {value!r}")
        values[name] = value
    return Config(**values)


def _node_line(root: yaml.Node, *keys: str) -> int:
    """The 1-based line of a nested key in the composed YAML, best effort."""
    node, line = root, 1
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            break
        for k, v in node.value:
            if k.value == key:
                node, line = v, k.start_mark.line + 1
                break
        else:
            break
    return line


def _parse_lsp(value: Any, path: Path, root: yaml.Node) -> tuple[LspServerSpec, ...]:
    def fail(msg: str, *keys: str) -> ConfigError:
        line = _node_line(root, "lsp", *keys)
        dotted = ".".join(("lsp", *keys))
        return ConfigError(f"config error in {path} line {line}: key {dotted!r}: {msg}")

    if value is None:
        return ()
    if not isinstance(value, dict):
        raise fail("expected a mapping with a `servers` key")
    unknown = set(value) - {"servers"}
    if unknown:
        raise fail("unknown key (known keys: servers)", str(sorted(unknown)[0]))
    servers = value.get("servers") or {}
    if not isinstance(servers, dict):
        raise fail("expected a mapping of server names", "servers")
    specs: list[LspServerSpec] = []
    owner: dict[str, str] = {}
    for name, entry in servers.items():
        keys = ("servers", str(name))
        if not isinstance(entry, dict):
            raise fail("expected {command: [...], extensions: [...]}", *keys)
        extra = set(entry) - _SERVER_KEYS
        if extra:
            raise fail(
                f"unknown key (known keys: {', '.join(sorted(_SERVER_KEYS))})", *keys, *extra
            )
        command = entry.get("command")
        if isinstance(command, str):
            command = command.split()
        if not command or not all(isinstance(c, str) for c in command):
            raise fail("expected a list of strings", *keys, "command")
        extensions = entry.get("extensions")
        if not extensions or not all(isinstance(e, str) for e in extensions):
            raise fail("expected a list of extensions like [.py]", *keys, "extensions")
        norm = tuple(e if e.startswith(".") else f".{e}" for e in extensions)
        for ext in norm:
            if ext in owner:
                msg = f"extension {ext} is already served by {owner[ext]}: one server per extension"
                raise fail(msg, *keys, "extensions")
            owner[ext] = str(name)
        for opt in ("initializationOptions", "settings"):
            if opt in entry and not isinstance(entry[opt], dict | type(None)):
                raise fail("expected a mapping", *keys, opt)
        markers = entry.get("rootMarkers") or []
        if not isinstance(markers, list):
            raise fail("expected a list of file names", *keys, "rootMarkers")
        specs.append(
            LspServerSpec(
                name=str(name),
                command=tuple(command),
                extensions=norm,
                initialization_options=entry.get("initializationOptions"),
                settings=entry.get("settings"),
                root_markers=tuple(str(m) for m in markers),
            )
        )
    return tuple(specs)
