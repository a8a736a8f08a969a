"""The house rules that a reader of the code relies on, checked on every module of mm_tui.

Import contracts (pyproject's `[tool.importlinter]`) run through import-linter; cycles are
found on grimp's graph with TYPE_CHECKING imports included; module sizes and swallowed
exceptions are read from the source. All are static: no module is imported, so modules no
test loads (every tool under `agent/tools/`) are seen too.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "mm_tui"
MAX_MODULE_LINES = 400
#: Modules allowed past `MAX_MODULE_LINES`, each with its own ceiling and its reason: the limit
#: asks a reviewer to look, it does not split a class across files (docs/decisions: one App).
LONG_MODULES: dict[str, tuple[int, str]] = {
    "mm_tui/app.py": (
        560,
        "the one App class: Textual looks for bindings, actions, message handlers and the "
        "palette's commands on the App; the work itself is in mm_tui/app_parts/",
    ),
    "mm_tui/widgets/block_window.py": (
        430,
        "one class: the column's three parts (records above, mounted blocks, records below) "
        "and the scrolls that move blocks between them keep one invariant, read in one file",
    ),
}
LOGGING_NAMES = {"log", "logger", "logging", "_log", "LOG"}


#: The scripted server sits beside the package (not installed) and keeps its house rules.
SCRIPTED_SERVER = PACKAGE.parent / "scripted_server"


def _modules() -> list[Path]:
    return sorted([*PACKAGE.rglob("*.py"), *SCRIPTED_SERVER.rglob("*.py")])


def _strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """Tarjan's algorithm, iteratively: the groups of modules that import each other."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in graph.modules or graph.is_module_squashed(successor):
                    continue
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    imported = sorted(graph.find_modules_directly_imported_by(successor))
                    work.append((successor, iter(imported)))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                group: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups


def test_no_module_imports_itself_back_through_others() -> None:
    graph = grimp.build_graph("mm_tui", exclude_type_checking_imports=False, cache_dir=None)
    assert "mm_tui.agent.tools.edit_file" in graph.modules  # modules no test imports are seen
    assert _strongly_connected(graph) == []


def test_the_cycle_finder_sees_a_cycle_through_type_checking_imports(tmp_path: Path) -> None:
    package = tmp_path / "cyclic_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from cyclic_pkg import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from cyclic_pkg import a\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        graph = grimp.build_graph("cyclic_pkg", exclude_type_checking_imports=False, cache_dir=None)
    finally:
        sys.path.remove(str(tmp_path))
    assert _strongly_connected(graph) == [["cyclic_pkg.a", "cyclic_pkg.b"]]


def test_the_import_contracts_hold() -> None:
    """The core never imports Textual or the window; lsp imports nothing of the core; widgets
    never import the app; the support room imports nothing of mm_tui."""
    executable = Path(sys.executable).parent / "lint-imports"
    command = [str(executable)] if executable.exists() else [shutil.which("lint-imports") or ""]
    result = subprocess.run(
        [*command, "--no-cache"],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "BROKEN" not in result.stdout
    assert "0 broken" in result.stdout


def _sizes() -> dict[str, int]:
    return {
        path.relative_to(PACKAGE.parent).as_posix(): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in _modules()
    }


def test_no_module_is_over_400_lines_but_the_listed_ones() -> None:
    """A module past the limit is listed with its reason; a listed one keeps to its ceiling."""
    over = {name: lines for name, lines in _sizes().items() if lines > MAX_MODULE_LINES}
    unlisted = {name: lines for name, lines in over.items() if name not in LONG_MODULES}
    assert unlisted == {}
    past_ceiling = {name: lines for name, lines in over.items() if lines > LONG_MODULES[name][0]}
    assert past_ceiling == {}


def test_every_listed_long_module_is_still_long() -> None:
    """An exception no module needs any more is taken off the list."""
    sizes = _sizes()
    stale = [name for name in LONG_MODULES if sizes.get(name, 0) <= MAX_MODULE_LINES]
    assert stale == []


def _catches_broadly(handler: ast.ExceptHandler) -> bool:
    if handler.type is None:
        return True
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in ("Exception", "BaseException") for t in types)


def _logs_or_raises(handler: ast.ExceptHandler) -> bool:
    for node in ast.walk(ast.Module(body=handler.body, type_ignores=[])):
        if isinstance(node, ast.Raise):
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in LOGGING_NAMES
        ):
            return True
    return False


def swallowed_without_a_log(source: str) -> list[int]:
    """Lines of `except Exception` / `except BaseException` / bare `except` handlers that
    neither re-raise nor log."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ExceptHandler)
        and _catches_broadly(node)
        and not _logs_or_raises(node)
    ]


def test_every_swallowed_exception_is_logged() -> None:
    silent = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in _modules()
        if (lines := swallowed_without_a_log(path.read_text(encoding="utf-8")))
    }
    assert silent == {}


def test_the_swallow_check_tells_a_log_from_silence() -> None:
    silent = "try:\n    f()\nexcept Exception:\n    pass\n"
    logged = "try:\n    f()\nexcept Exception:\n    log.debug('x', exc_info=True)\n"
    reraised = "try:\n    f()\nexcept BaseException:\n    cleanup()\n    raise\n"
    narrow = "try:\n    f()\nexcept OSError:\n    pass\n"
    assert swallowed_without_a_log(silent) == [3]
    assert swallowed_without_a_log(logged) == []
    assert swallowed_without_a_log(reraised) == []
    assert swallowed_without_a_log(narrow) == []


def test_no_symbolic_link_is_tracked() -> None:
    """A worktree's `.venv` link to the shared venv was once committed (`.gitignore` said
    `.venv/`, which matches a directory only): a clone then held a dangling `.venv`, and
    merging it replaced the real venv. No file of the project is a link."""
    root = PACKAGE.parent
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    listed = subprocess.run(
        ["git", "ls-files", "-s"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert listed
    assert [line.split("\t")[-1] for line in listed if line.startswith("120000 ")] == []
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", ".venv"], cwd=root)
    assert ignored.returncode == 0  # a link named .venv (not only a directory) is ignored
