"""The core never imports Textual, and stays light to import (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys


def modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_importing_the_agent_core_never_imports_textual() -> None:
    loaded = modules_after(
        "import mm_tui.agent.agent, mm_tui.agent.tools.registry, mm_tui.agent.session, "
        "mm_tui.headless"
    )
    assert not {m for m in loaded if m == "textual" or m.startswith("textual.")}


def test_openai_and_pygls_are_imported_only_when_first_needed() -> None:
    loaded = modules_after("import mm_tui.agent.agent, mm_tui.cli")
    assert "openai" not in loaded
    assert "pygls" not in loaded
