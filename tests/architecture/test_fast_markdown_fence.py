"""mm-tui's own Markdown drawing is one package with one way in (`FastAnswerBlock`, named by
`answer_blocks.FAST_ANSWER`): no module of the product outside the package imports its modules,
so switching it off (`MM_TUI_MARKDOWN=stock`) or mending it after a Textual upgrade stays
inside it. (Tests may reach its modules: they test them.)"""

from __future__ import annotations

import ast
from pathlib import Path

import mm_tui.widgets.fast_markdown as fast_markdown
from mm_tui.widgets.answer_blocks import FAST_ANSWER

PACKAGE = Path(fast_markdown.__file__).parent
PRODUCT = PACKAGE.parents[1]  # mm_tui/


def _imported(tree: ast.Module) -> list[str]:
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


def test_nothing_outside_the_package_imports_its_modules() -> None:
    reaching_in = [
        f"{path.relative_to(PRODUCT.parent)}: {name}"
        for path in sorted(PRODUCT.rglob("*.py"))
        if PACKAGE not in path.parents
        for name in _imported(ast.parse(path.read_text(encoding="utf-8")))
        if name.startswith(f"{fast_markdown.__name__}")
    ]
    assert reaching_in == []


def test_its_one_public_class_is_what_the_answer_blocks_name() -> None:
    assert fast_markdown.__all__ == ["FastAnswerBlock"]
    assert fast_markdown.__name__ == FAST_ANSWER
