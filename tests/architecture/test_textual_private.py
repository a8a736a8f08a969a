"""Textual's private API is used in one module only, mm_tui/widgets/textual_private.py, and
each private it relies on has, in the installed (pinned) Textual, the shape it relies on.

A private member is a name with one leading underscore that Textual's own classes define (in a
class body, or as `self._name = ...` in their methods). Our own `self._x` attributes do not
count: a `self._x` / `super()._x` / an underscore method only counts inside a class of ours whose
Textual bases define `_x` (or a mixin of ours mixed into such a class); `thing._x` on any other
object (or `getattr(thing, "_x")`) counts when Textual defines `_x` and no class of that module
defines it. A class attribute of ours named like a private of its Textual bases counts too.
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
            for name in _defined_in([node]) & textual_names:  # a method or a class attribute
                if not isinstance(node, ast.ClassDef):
                    yield f"{where}:{node.lineno} overrides {cls.__name__}.{name}"
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
        elif (  # getattr(thing, "_x"), setattr(thing, "_x", ...)
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "setattr", "hasattr", "delattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in textual_names
            and node.args[1].value not in mine
        ):
            yield f"{where}:{node.lineno} {node.func.id}(…, {node.args[1].value!r})"


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
        "import textual.widgets._markdown",
        "overrides GrowsInPlace._size_updated",
        "overrides TextAreaHooks._on_key",
        "TextAreaHooks uses ._cursor_visible",
        "uses ._pruning",
        "uses ._styles_cache",
    ):
        assert expected in uses, expected


# --- What the adapter relies on, pinned --------------------------------------------------------

#: Private modules the adapter imports from, and the names it takes from each.
PINNED_IMPORTS: dict[str, tuple[str, ...]] = {
    "textual._xterm_parser": ("XTermParser",),
    "textual.widgets._footer": ("FooterKey",),
    "textual.widgets._markdown": (
        "MarkdownBlock",
        "MarkdownBullet",
        "MarkdownBulletList",
        "MarkdownListItem",
        "MarkdownOrderedList",
        "MarkdownOrderedListItem",
        "MarkdownParagraph",
        "MarkdownTable",
        "MarkdownTableContent",
        "MarkdownTH",
    ),
}

#: Private methods the adapter calls or overrides: (module, class, name) -> parameter names,
#: and whether it is a coroutine function.
PINNED_METHODS: dict[tuple[str, str, str], tuple[tuple[str, ...], bool]] = {
    ("textual.widget", "Widget", "_size_updated"): (
        ("self", "size", "virtual_size", "container_size", "layout"),
        False,
    ),
    ("textual.widget", "Widget", "_set_dirty"): (("self", "*regions"), False),
    ("textual.widget", "Widget", "_get_style"): (("self", "style"), False),
    ("textual.widgets._text_area", "TextArea", "_restart_blink"): (("self",), False),
    ("textual.widgets._text_area", "TextArea", "_toggle_cursor_blink_visible"): (
        ("self",),
        False,
    ),
    ("textual.widgets._text_area", "TextArea", "_on_key"): (("self", "event"), True),
    ("textual.widgets._text_area", "TextArea", "_on_paste"): (("self", "event"), True),
    ("textual.widgets._markdown", "MarkdownTableContent", "_update_rows"): (
        ("self", "updated_rows"),
        True,
    ),
    ("textual.widgets._markdown", "MarkdownTable", "_get_headers_and_rows"): (("self",), False),
    ("textual.widgets._markdown", "MarkdownBlock", "_token_to_content"): (
        ("self", "token"),
        False,
    ),
}

#: Private attributes the adapter reads or sets: (module, class, name), the class that sets it.
PINNED_ATTRIBUTES: set[tuple[str, str, str]] = {
    ("textual.widgets._markdown", "MarkdownBlock", "_token"),
    ("textual.widgets._markdown", "MarkdownBlock", "_markdown"),
    ("textual.widgets._markdown", "MarkdownBlock", "_blocks"),
    ("textual.widgets._markdown", "MarkdownBlock", "_content"),
    ("textual.widgets._markdown", "MarkdownTable", "_headers"),
    ("textual.widgets._markdown", "MarkdownTable", "_rows"),
    ("textual.dom", "DOMNode", "_pruning"),
    ("textual.app", "App", "_driver"),
    ("textual.widget", "Widget", "_styles_cache"),
    ("textual._styles_cache", "StylesCache", "_cache"),
    ("textual._styles_cache", "StylesCache", "_dirty_lines"),
    ("textual.widgets._text_area", "TextArea", "_cursor_visible"),
}


def _owner(module: str, name: str) -> type:
    return getattr(importlib.import_module(module), name)


def test_the_private_modules_the_adapter_imports_still_hold_its_names() -> None:
    moved = [
        f"{module}.{name}"
        for module, names in PINNED_IMPORTS.items()
        for name in names
        if not isinstance(getattr(importlib.import_module(module), name, None), type)
    ]
    assert moved == [], "gone from Textual's private modules"


def test_the_private_methods_the_adapter_uses_keep_their_signatures() -> None:
    moved = []
    for (module, owner, name), (parameters, is_async) in PINNED_METHODS.items():
        method = getattr(_owner(module, owner), name, None)
        if method is None:
            moved.append(f"{owner}.{name}: gone")
            continue
        shape = tuple(
            f"*{p.name}" if p.kind is inspect.Parameter.VAR_POSITIONAL else p.name
            for p in inspect.signature(method).parameters.values()
        )
        if shape != parameters or inspect.iscoroutinefunction(method) != is_async:
            moved.append(f"{owner}.{name}{shape} async={inspect.iscoroutinefunction(method)}")
    assert moved == [], "private methods whose shape changed"


def test_the_private_attributes_the_adapter_uses_are_still_set_by_their_class() -> None:
    moved = [
        f"{owner}.{name}"
        for module, owner, name in PINNED_ATTRIBUTES
        if name not in textual_privates_of(_owner(module, owner))
    ]
    assert moved == [], "private attributes no longer set where they were"


def test_the_styles_cache_rows_are_a_dict_and_a_set() -> None:
    """`shift_drawn_rows` moves the drawn rows (row -> Strip) and rewrites the rows to draw."""
    from textual._styles_cache import StylesCache

    styles_cache = StylesCache()
    assert isinstance(styles_cache._cache, dict)  # pyright: ignore[reportPrivateUsage]
    assert isinstance(styles_cache._dirty_lines, set)  # pyright: ignore[reportPrivateUsage]


def test_every_private_the_adapter_uses_is_pinned_here(
    classes: list[tuple[type, ast.ClassDef, Path]],
) -> None:
    """A private added to the adapter must be pinned above, or this fails naming it."""
    pinned = {name for _, _, name in PINNED_METHODS} | {name for _, _, name in PINNED_ATTRIBUTES}
    unpinned = []
    for use in private_uses(ADAPTER, classes):
        if " import textual." in use:
            module = use.rsplit(" import ", 1)[-1]
            if module not in PINNED_IMPORTS:
                unpinned.append(use)
        elif " import " in use:
            module, names = use.split("from ", 1)[-1].split(" import ")
            unpinned += [
                f"{module}.{name}"
                for name in names.split(", ")
                if name not in PINNED_IMPORTS.get(module, ())
            ]
        elif use.rsplit(".", 1)[-1] not in pinned:
            unpinned.append(use)
    assert unpinned == [], "privates the adapter uses that no test here pins"
