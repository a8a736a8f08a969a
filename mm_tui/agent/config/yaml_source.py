"""YAML to Python data, safely: libyaml's safe loader, bounded, with each key's line.

A config file is text someone may have handed you (a cloned repository's `.mm.yaml`), so the
loader builds only plain data (no Python objects), refuses alias bombs and deep nesting before
anything expands them, and keeps the composed tree so every problem can name its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

#: Nodes visited with aliases expanded: a real config has a few hundred.
MAX_NODES = 20_000
#: Nesting of mappings and lists: a real config goes four or five deep.
MAX_DEPTH = 32

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Problem:
    """One mistake in the file: its 1-based line, the dotted key (if any) and what is wrong."""

    line: int
    key: tuple[str, ...]
    message: str


class YamlProblem(Exception):
    """The text is not usable YAML (syntax, size of the expanded tree); one problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(frozen=True)
class YamlDocument:
    """The plain data of the file and its composed tree (for lines)."""

    data: Any
    root: yaml.Node | None


def load_yaml(text: str) -> tuple[YamlDocument, list[Problem]]:
    """Parse one document; problems found in the tree itself (a key given twice) come back."""
    loader = _Loader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return YamlDocument(None, None), []
        problems = _walk(root)
        data = loader.construct_document(root)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlProblem(Problem(line, (), f"YAML syntax: {problem}")) from None
    except RecursionError:
        raise YamlProblem(Problem(0, (), f"nested deeper than {MAX_DEPTH} levels")) from None
    finally:
        loader.dispose()
    return YamlDocument(data, root), problems


def _walk(root: yaml.Node) -> list[Problem]:
    """Bound the tree as it would expand (aliases counted each time) and find repeated keys."""
    problems: list[Problem] = []
    stack: list[tuple[yaml.Node, int, tuple[str, ...]]] = [(root, 1, ())]
    visited = 0
    while stack:
        node, depth, path = stack.pop()
        visited += 1
        line = node.start_mark.line + 1
        if visited > MAX_NODES:
            msg = f"more than {MAX_NODES} values once aliases are expanded; not a config file"
            raise YamlProblem(Problem(line, (), msg))
        if depth > MAX_DEPTH:
            raise YamlProblem(Problem(line, (), f"nested deeper than {MAX_DEPTH} levels"))
        if isinstance(node, yaml.SequenceNode):
            stack.extend((item, depth + 1, path) for item in node.value)
        elif isinstance(node, yaml.MappingNode):
            seen: dict[str, int] = {}
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                key_line = key.start_mark.line + 1
                if name in seen:
                    msg = f"given twice (first on line {seen[name]})"
                    problems.append(Problem(key_line, (*path, name), msg))
                seen.setdefault(name, key_line)
                stack.append((value, depth + 1, (*path, name)))
    return problems


def key_line(root: yaml.Node | None, path: tuple[str, ...]) -> int:
    """The 1-based line of a nested key in the composed tree (the deepest one found)."""
    if root is None:
        return 1
    node, line = root, root.start_mark.line + 1
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            break
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and str(k.value) == key:
                node, line = v, k.start_mark.line + 1
                break
        else:
            break
    return line
