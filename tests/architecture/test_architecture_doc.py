"""docs/ARCHITECTURE.md walks a key press and a model chunk through the code, file by file:
every numbered step names a file and a class or function in it (`path` · `Name.method`).
A step whose file is gone, or that no longer defines its name, fails here."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ARCHITECTURE.md"
STEP = re.compile(r"^\d+\. `([\w/.]+\.py)` · `([\w.]+)`", re.MULTILINE)
WALKS = ("## Where a key press goes", "## Where a model chunk goes")


def _walk(heading: str) -> list[tuple[str, str]]:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return STEP.findall(text[start : end if end != -1 else None])


def _defines(tree: ast.Module, dotted: str) -> bool:
    """`dotted` (a class, a function, or Class.method) is defined in the module."""
    scope: list[ast.stmt] = tree.body
    for part in dotted.split("."):
        found = next(
            (
                node
                for node in scope
                if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == part
            ),
            None,
        )
        if found is None:
            return False
        scope = found.body
    return True


@pytest.mark.parametrize("heading", WALKS)
def test_every_step_of_the_walk_names_a_file_that_defines_its_name(heading: str) -> None:
    steps = _walk(heading)
    assert len(steps) >= 5, f"{heading}: the walk lost its steps"
    missing = []
    for path, name in steps:
        source = ROOT / path
        if not source.is_file():
            missing.append(f"{path}: no such file")
        elif not _defines(ast.parse(source.read_text(encoding="utf-8")), name):
            missing.append(f"{path}: {name} is not defined there")
    assert missing == []


def test_the_walks_start_at_the_prompt_and_at_the_model_call() -> None:
    assert _walk(WALKS[0])[0][0] == "mm_tui/widgets/prompt.py"
    assert _walk(WALKS[1])[0][0] == "mm_tui/agent/model_call.py"
