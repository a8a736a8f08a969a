"""From YAML text to a `Config`, reporting every problem of the file at once (SPEC §2).

`schema.file_types` says what each key allows, derived from the settings `Config` declares;
msgspec checks each key's value against its type (strictly: `extensions: .py` is a string,
not a list, and is refused). Keys are checked one by one so that every mistake gets its own
line with the file, the line and the key, in the words written beside its type.
"""

from __future__ import annotations

import types
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec
import yaml

from mm_tui.agent.config.model import (
    Config,
    ConfigError,
    KeyChoice,
    Notifications,
    settings,
    shown,
)
from mm_tui.agent.config.schema import (
    LspSection,
    NotificationsSection,
    PermissionRules,
    file_types,
)
from mm_tui.agent.config.yaml_source import Problem, YamlProblem, key_line, load_yaml
from mm_tui.agent.rules import RuleError, parse_rule
from mm_tui.lsp.spec import LspServerSpec


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
    checker.check_file(data)
    problems += checker.problems
    config = Config(source=path)
    if not problems:
        config, more = _build(data, path, root)
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


class _Checker:
    """Walks the data beside the types; nested structs are checked key by key too."""

    def __init__(self, root: yaml.Node | None) -> None:
        self.root = root
        self.problems: list[Problem] = []

    def add(self, key: tuple[str, ...], message: str) -> None:
        self.problems.append(Problem(key_line(self.root, key), key, message))

    def check_file(self, data: dict[Any, Any]) -> None:
        """The top level: every key a setting's, its value of the setting's type."""
        known = file_types()
        in_range = {declared.key: declared.in_range for _, declared in settings()}
        for key, value in data.items():
            if not isinstance(key, str) or key not in known:
                self.add((str(key),), f"unknown key (known keys: {', '.join(known)})")
                continue
            self.check_value(value, known[key], (key,), in_range[key])

    def check_struct(
        self, data: dict[Any, Any], struct: type[msgspec.Struct], path: tuple[str, ...]
    ) -> None:
        fields = {f.encode_name: f for f in msgspec.structs.fields(struct)}
        for key, value in data.items():
            info = fields.get(key) if isinstance(key, str) else None
            if info is None:
                known = ", ".join(fields)
                self.add((*path, str(key)), f"unknown key (known keys: {known})")
                continue
            self.check_value(value, info.type, (*path, key))
        for name, info in fields.items():
            if info.required and name not in data:
                self.add((*path, name), f"missing: expected {_words(info.type)}")

    def check_value(
        self, value: object, tp: Any, path: tuple[str, ...], in_range: str | None = None
    ) -> None:
        members = _members(tp)
        struct = next((m for m in members if isinstance(m, type) and issubclass(m, msgspec.Struct)), None)  # fmt: skip
        if struct is not None and isinstance(value, dict):
            self.check_struct(value, struct, path)
            return
        table = next((m for m in members if get_origin(m) is dict), None)
        if table is not None and isinstance(value, dict):
            _, entry_type = get_args(table)
            for name, entry in value.items():
                if not isinstance(name, str):
                    self.add((*path, str(name)), "expected a name (a string)")
                else:
                    self.check_value(entry, entry_type, (*path, name))
            return
        try:
            msgspec.convert(value, tp)
        except msgspec.ValidationError:
            if in_range is not None and _fits_without_bounds(value, tp):
                self.add(path, f"expected {in_range}, got {shown(value)}")
            else:
                self.add(path, f"expected {_words(tp)}, got {shown(value)}")


def _members(tp: Any) -> list[Any]:
    """The types a value of `tp` may be: its union's members, each without `Annotated`."""
    if get_origin(tp) is Annotated:
        return _members(get_args(tp)[0])
    if get_origin(tp) in (Union, types.UnionType):
        return [m for member in get_args(tp) for m in _members(member)]
    return [tp]


def _words(tp: Any) -> str:
    """The description written beside `tp` (or beside the first member of its union that has
    one): what a value of it is, in the person's words."""
    if get_origin(tp) is Annotated:
        described = [m.description for m in tp.__metadata__ if isinstance(m, msgspec.Meta)]
        if any(described):
            return next(d for d in described if d)
        return _words(get_args(tp)[0])
    if get_origin(tp) in (Union, types.UnionType):
        return next((w for m in get_args(tp) if (w := _words(m))), "")
    return ""


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


def _build(
    data: dict[str, Any], path: Path, root: yaml.Node | None
) -> tuple[Config, list[Problem]]:
    """The `Config` of a file whose keys all passed; cross-key rules checked here."""
    known = file_types()
    values: dict[str, Any] = {}
    problems: list[Problem] = []
    for name, declared in settings():
        if declared.key not in data:
            continue
        value = msgspec.convert(data[declared.key], known[declared.key])
        if declared.key == "lsp" and value is None:  # `lsp:` left empty: no servers
            values[name] = ()
        elif value is None:
            continue
        elif declared.key == "permissions" and isinstance(value, PermissionRules):
            for effect in ("allow", "ask", "deny"):
                texts = tuple(getattr(value, effect))
                problems += _rule_problems(texts, ("permissions", effect), root)
                values[f"{effect}_rules"] = texts
        elif isinstance(value, LspSection):
            values[name], more = _lsp_specs(value, root)
            problems += more
        elif declared.key == "keymap":
            values[name] = tuple(
                KeyChoice(binding, keys, key_line(root, ("keymap", binding)))
                for binding, keys in value.items()
            )
        elif isinstance(value, bool) and declared.key == "notifications":
            values[name] = Notifications() if value else Notifications(False, "off")
        elif isinstance(value, NotificationsSection):
            values[name] = Notifications(value.bell, value.desktop)
        else:
            values[name] = value
    problems += _timeout_problems(values, root)
    return replace(Config(source=path), **values), problems


def _timeout_problems(values: dict[str, Any], root: yaml.Node | None) -> list[Problem]:
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


def _rule_problems(
    texts: tuple[str, ...], key: tuple[str, ...], root: yaml.Node | None
) -> list[Problem]:
    """A rule that cannot be read is a config error on its list's line."""
    problems: list[Problem] = []
    for text in texts:
        try:
            parse_rule(text)
        except RuleError as error:
            problems.append(Problem(key_line(root, key), key, str(error)))
    return problems


def _lsp_specs(
    section: LspSection, root: yaml.Node | None
) -> tuple[tuple[LspServerSpec, ...], list[Problem]]:
    """Server specs with extensions normalised (`py` -> `.py`); one server per extension."""
    specs: list[LspServerSpec] = []
    problems: list[Problem] = []
    owner: dict[str, str] = {}
    for name, entry in (section.servers or {}).items():
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
