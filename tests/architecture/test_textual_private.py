"""Textual's private API is used in one module only, mm_tui/widgets/textual_private.py, and
each private it relies on has, in the installed (pinned) Textual, the shape it relies on.

A private member is a name with one leading underscore that Textual's own classes define (in a
class body, or as `self._name = ...` in their methods). Our own `self._x` attributes do not
count: a `self._x` / `super()._x` / an underscore method only counts inside a class of ours whose
Textual bases define `_x` (or a mixin of ours mixed into such a class); `thing._x` on any other
object counts when Textual defines `_x` and no class of that module defines it.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
import textual

import mm_tui

ROOT = Path(mm_tui.__file__).parent
ADAPTER = ROOT / "widgets" / "textual_private.py"
TEXTUAL = Path(textual.__file__).parent
#: namedtuple's public methods (`_replace`…) have an underscore so as not to clash with fields.
NAMEDTUPLE = {"_replace", "_asdict", "_fields", "_make", "_field_defaults"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _defined_in(body: list[ast.stmt]) -> set[str]:
    """Names a class body defines, and the `self._x` its methods assign."""
    names: set[str] = set()
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AnnAssign, ast.AugAssign))
            else []
        )
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                names.add(target.attr)
    return {name for name in names if _private(name)}


@cache
def _classes_of(path: Path) -> dict[str, set[str]]:
    """Each class of a file (by qualified name): the private names it defines."""
    found: dict[str, set[str]] = {}

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                found[prefix + node.name] = _defined_in(node.body)
                walk(node.body, f"{prefix}{node.name}.")

    walk(ast.parse(path.read_text(encoding="utf-8")).body, "")
    return found


def _textual_class(cls: type) -> bool:
    return cls.__module__.split(".")[0] == "textual"


@cache
def textual_privates_of(cls: type) -> frozenset[str]:
    """The private names a Textual class itself defines."""
    names = {name for name in vars(cls) if _private(name)}
    source = inspect.getsourcefile(cls)
    if source is not None:
        names |= _classes_of(Path(source)).get(cls.__qualname__, set())
    return frozenset(names)


@cache
def all_textual_privates() -> frozenset[str]:
    names: set[str] = set()
    for path in TEXTUAL.rglob("*.py"):
        for defined in _classes_of(path).values():
            names |= defined
    return frozenset(names)


def _modules() -> list[tuple[str, Path]]:
    found = []
    for info in pkgutil.walk_packages([str(ROOT)], "mm_tui."):
        if info.name.endswith("__main__") or info.name.startswith("mm_tui.agent"):
            continue  # the core never imports Textual (an import contract)
        spec = importlib.util.find_spec(info.name)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            found.append((info.name, Path(spec.origin)))
    return found


def _our_classes() -> list[tuple[type, ast.ClassDef, Path]]:
    """Every class of mm_tui (outside the core), with its AST and file."""
    found = []
    for name, path in _modules():
        module = importlib.import_module(name)

        def walk(body: list[ast.stmt], owner: object, path: Path) -> None:
            for node in body:
                if isinstance(node, ast.ClassDef):
                    cls = getattr(owner, node.name, None)
                    if isinstance(cls, type):
                        found.append((cls, node, path))
                        walk(node.body, cls, path)

        walk(ast.parse(path.read_text(encoding="utf-8")).body, module, path)
    return found


def _textual_names(cls: type, classes: list[type]) -> frozenset[str]:
    """The private names the Textual classes this class of ours is (or is mixed into) define."""
    users = [cls] if any(map(_textual_class, cls.__mro__)) else []
    users += [other for other in classes if cls in other.__mro__[1:]]
    names: set[str] = set()
    for user in users:
        for base in user.__mro__:
            if _textual_class(base):
                names |= textual_privates_of(base)
    return frozenset(names)


def _on_self(node: ast.Attribute) -> bool:
    value = node.value
    if isinstance(value, ast.Name):
        return value.id in {"self", "cls"}
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


def private_uses(path: Path, classes: list[tuple[type, ast.ClassDef, Path]]) -> Iterator[str]:
    """Each use of a Textual private in the file, as `file:line what`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    where = path.relative_to(ROOT.parent)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "textual" and any(map(_private, parts)):
                    yield f"{where}:{node.lineno} import {alias.name}"
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "textual":
            parts = (node.module or "").split(".")
            names = [alias.name for alias in node.names]
            if any(map(_private, parts)) or any(map(_private, names)):
                yield f"{where}:{node.lineno} from {node.module} import {', '.join(names)}"
    mine = set().union(*_classes_of(path).values()) if _classes_of(path) else set()
    # In a class: its overrides and its self/super accesses, against its Textual bases.
    in_class: set[int] = set()
    types = [cls for cls, _, _ in classes]
    for cls, class_node, class_path in classes:
        if class_path != path:
            continue
        textual_names = _textual_names(cls, types)
        for node in class_node.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                node.name in textual_names
            ):
                yield f"{where}:{node.lineno} overrides {cls.__name__}.{node.name}"
        for node in ast.walk(class_node):
            if isinstance(node, ast.Attribute) and _on_self(node):
                in_class.add(id(node))
                if node.attr in textual_names:
                    yield f"{where}:{node.lineno} {cls.__name__} uses .{node.attr}"
    # Elsewhere: any object's member that Textual defines and no class here does.
    textual_names = all_textual_privates()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and id(node) not in in_class
            and not _on_self(node)
            and node.attr in textual_names
            and node.attr not in mine
            and node.attr not in NAMEDTUPLE
        ):
            yield f"{where}:{node.lineno} uses .{node.attr}"


@pytest.fixture(scope="module")
def classes() -> list[tuple[type, ast.ClassDef, Path]]:
    return _our_classes()


def test_only_the_adapter_touches_textual_privates(
    classes: list[tuple[type, ast.ClassDef, Path]],
) -> None:
    stray = [
        use for _, path in _modules() if path != ADAPTER for use in private_uses(path, classes)
    ]
    assert stray == [], "Textual privates outside mm_tui/widgets/textual_private.py"


def test_the_scan_sees_what_the_adapter_touches(
    classes: list[tuple[type, ast.ClassDef, Path]],
) -> None:
    """The rule is not blind: run over the adapter, it finds each kind of use."""
    uses = "\n".join(private_uses(ADAPTER, classes))
    for expected in (
        "from textual.widgets._markdown import",
        "import XTermParser",
        "overrides GrowsInPlace._size_updated",
        "overrides TextAreaHooks._on_key",
        "TextAreaHooks uses ._cursor_visible",
        "uses ._pruning",
        "uses ._styles_cache",
    ):
        assert expected in uses, expected
