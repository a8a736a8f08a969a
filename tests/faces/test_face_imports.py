"""The headless and ACP faces never import Textual; the ACP SDK loads only for `mm-tui acp`."""

from __future__ import annotations

import subprocess
import sys


def modules_after(statement: str) -> set[str]:
    code = f"{statement}\nimport sys\nprint('\\n'.join(sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def of(package: str, loaded: set[str]) -> set[str]:
    return {m for m in loaded if m == package or m.startswith(f"{package}.")}


def test_headless_faces_and_the_cli_parser_load_neither_textual_nor_the_acp_sdk() -> None:
    loaded = modules_after(
        "import mm_tui.headless, mm_tui.faces.seed_display, mm_tui.faces.rows, "
        "mm_tui.faces.json_output, mm_tui.cli\nmm_tui.cli.build_parser()"
    )
    assert not of("textual", loaded)
    assert not of("acp", loaded)


def test_the_acp_face_never_loads_textual() -> None:
    loaded = modules_after("import mm_tui.acp.server, mm_tui.agent.agent")
    assert of("acp", loaded)
    assert not of("textual", loaded)
