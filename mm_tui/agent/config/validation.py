"""From YAML text to a `Config`, reporting every problem of the file at once (SPEC §2).

The structs in `schema` say what is allowed; msgspec checks each key's value against its
type (strictly: `extensions: .py` is a string, not a list, and is refused). Keys are checked
one by one so that every mistake gets its own line with the file, the line and the key.
"""

from __future__ import annotations

import types
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from mm_tui.agent.config.model import Config, ConfigError, KeyChoice, Notifications
from mm_tui.agent.config.schema import (
    EXPECTED,
    IN_RANGE,
    ConfigFile,
    LspSection,
    NotificationsSection,
    PermissionRules,
)
from mm_tui.agent.config.yaml_source import Problem, YamlProblem, key_line, load_yaml
from mm_tui.agent.rules import RuleError, parse_rule
from mm_tui.lsp.spec import LspServerSpec

#: A value longer than this is shortened in an error line (a line never quotes a huge value).
SHOWN_CHARS = 60


def validate_config_text(text: str, path: Path) -> Config:
    """Validate YAML text; `path` is only used in messages and as `Config.source`."""
    try:
        document, problems = load_yaml(text)
    except YamlProblem as exc:
        raise ConfigError(_phrase(path, exc.problem)) from None
    data, root = document.data, document.root
    if data is None:
        return Config(source=path)
    if not isinstance(data, dict):
        raise ConfigError(f"config error in {path} line 1: expected a mapping of keys (key: value)")
    checker = _Checker(root)
    checker.check_struct(data, ConfigFile, (), ())
    problems += checker.problems
    config = Config(source=path)
    if not problems:
        config, more = _build(msgspec.convert(data, ConfigFile), path, root)
        config = replace(config, file_keys=frozenset(k for k in data if isinstance(k, str)))
        problems += more
    if problems:
        ordered = sorted(problems, key=lambda p: p.line)
        raise ConfigError(*(_phrase(path, p) for p in ordered))
    return config


def _phrase(path: Path, problem: Problem) -> str:
    """One line: `config error in FILE line N: key 'a.b': what is wrong`."""
    where = f" line {problem.line}" if problem.line else ""
    key = f" key {'.'.join(problem.key)!r}:" if problem.key else ""
    return f"config error in {path}{where}:{key} {problem.message}"


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else f"{text[: SHOWN_CHARS - 1]}…"


class _Checker:
    """Walks the data beside the structs; nested structs are checked key by key too."""

    def __init__(self, root: Any) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def add(self, key: tuple[str, ...], message: str) -> None:
        self.problems.append(Problem(key_line(self.root, key), key, message))

    def expected(self, key: tuple[str, ...], pattern: tuple[str, ...], value: object) -> None:
        self.add(key, f"expected {EXPECTED['.'.join(pattern)]}, got {_shown(value)}")

    def check_struct(
        self,
        data: dict[Any, Any],
        struct: type[msgspec.Struct],
        path: tuple[str, ...],
        pattern: tuple[str, ...],
    ) -> None:
        fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
        for key, value in data.items():
            info = fields.get(key) if isinstance(key, str) else None
            if info is None:
                known = ", ".join(fields)
                self.add((*path, str(key)), f"unknown key (known keys: {known})")
                continue
            self.check_value(value, info.type, (*path, key), (*pattern, key))
        for name, info in fields.items():
            if info.required and name not in data:
                self.add((*path, name), f"missing: expected {EXPECTED['.'.join((*pattern, name))]}")

    def check_value(
        self, value: object, tp: Any, path: tuple[str, ...], pattern: tuple[str, ...]
    ) -> None:
        struct = _member(tp, lambda t: isinstance(t, type) and issubclass(t, msgspec.Struct))
        if struct is not None and isinstance(value, dict):
            self.check_struct(value, struct, path, pattern)
            return
        table = _member(tp, lambda t: get_origin(t) is dict)
        if table is not None and isinstance(value, dict):
            _, entry_type = get_args(table)
            for name, entry in value.items():
                if not isinstance(name, str):
                    self.add((*path, str(name)), "expected a name (a string)")
                else:
                    self.check_value(entry, entry_type, (*path, name), (*pattern, "*"))
            return
        try:
            msgspec.convert(value, tp)
        except msgspec.ValidationError:
            dotted = ".".join(pattern)
            if dotted in IN_RANGE and _fits_without_bounds(value, tp):
                self.add(path, f"expected {IN_RANGE[dotted]}, got {_shown(value)}")
            else:
                self.expected(path, pattern, value)


def _member(tp: Any, test: Any) -> Any:
    """The first member of a union (or the type itself) that passes `test`, else None."""
    members = get_args(tp) if get_origin(tp) in (Union, types.UnionType) else (tp,)
    return next((m for m in members if test(m)), None)


def _without_bounds(tp: Any) -> Any:
    """The same type with msgspec's `Meta` constraints dropped (to tell type from range)."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _without_bounds(get_args(tp)[0])
    if origin in (Union, types.UnionType):
        return Union[tuple(_without_bounds(a) for a in get_args(tp))]  # noqa: UP007
    return tp


def _fits_without_bounds(value: object, tp: Any) -> bool:
    try:
        msgspec.convert(value, _without_bounds(tp))
    except msgspec.ValidationError:
        return False
    return True


def _build(file: ConfigFile, path: Path, root: Any) -> tuple[Config, list[Problem]]:
    """The `Config` of a file whose keys all passed; cross-key rules checked here."""
    values: dict[str, Any] = {}
    for info in msgspec.structs.fields(ConfigFile):
        value = getattr(file, info.name)
        if value is not msgspec.UNSET and value is not None:
            values[info.name] = value
    problems: list[Problem] = []
    rules = values.get("permissions")
    if isinstance(rules, PermissionRules):
        values["permissions"] = "ask"
        for effect in ("allow", "ask", "deny"):
            texts = tuple(getattr(rules, effect))
            problems += _rule_problems(texts, ("permissions", effect), root)
            values[f"{effect}_rules"] = texts
    if "scrub_env" in values:
        values["scrub_env"] = tuple(values["scrub_env"])
    if "keymap" in values:
        keymap: dict[str, str] = values["keymap"]
        values["keymap"] = tuple(
            KeyChoice(name, keys, key_line(root, ("keymap", name))) for name, keys in keymap.items()
        )
    notify = values.get("notifications")
    if isinstance(notify, bool):
        values["notifications"] = Notifications() if notify else Notifications(False, "off")
    elif isinstance(notify, NotificationsSection):
        values["notifications"] = Notifications(notify.bell, notify.desktop)
    problems += _timeout_problems(values, root)
    section = values.pop("lsp_servers", None)
    if section is not None or file.lsp_servers is None:  # `lsp:` left empty: no servers
        specs, problems = _lsp_specs(section, root)
        values["lsp_servers"] = specs
    return replace(Config(source=path), **values), problems


def _timeout_problems(values: dict[str, Any], root: Any) -> list[Problem]:
    """A ceiling below the default limit would let no call ask for more: said, not bent."""
    ceiling = values.get("bash_timeout_max")
    default = values.get("bash_timeout", Config.bash_timeout)
    if ceiling is None or ceiling >= default:
        return []
    key = ("bashTimeoutMax",)
    message = (
        f"{ceiling:g} is below bashTimeout ({default:g}): "
        "the most a bash call may ask for cannot be less than its default limit"
    )
    return [Problem(key_line(root, key), key, message)]


def _rule_problems(texts: tuple[str, ...], key: tuple[str, ...], root: Any) -> list[Problem]:
    """A rule that cannot be read is a config error on its list's line."""
    problems: list[Problem] = []
    for text in texts:
        try:
            parse_rule(text)
        except RuleError as error:
            problems.append(Problem(key_line(root, key), key, str(error)))
    return problems


def _lsp_specs(
    section: LspSection | None, root: Any
) -> tuple[tuple[LspServerSpec, ...], list[Problem]]:
    """Server specs with extensions normalised (`py` -> `.py`); one server per extension."""
    specs: list[LspServerSpec] = []
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    for name, entry in ((section.servers if section else None) or {}).items():
        extensions = tuple(e if e.startswith(".") else f".{e}" for e in entry.extensions)
        for ext in extensions:
            if ext in owner:
                key = ("lsp", "servers", name, "extensions")
                msg = f"extension {ext} is already served by {owner[ext]}: one server per extension"
                problems.append(Problem(key_line(root, key), key, msg))
            owner.setdefault(ext, name)
        specs.append(
            LspServerSpec(
                name=name,
                command=tuple(entry.command),
                extensions=extensions,
                initialization_options=entry.initializationOptions,
                settings=entry.settings,
                root_markers=tuple(entry.rootMarkers or ()),
            )
        )
    return tuple(specs), problems
