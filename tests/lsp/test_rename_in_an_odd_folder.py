"""A project under a folder named with "?" (a hostile repository): pyright
and basedpyright then find no source files ("No source files found." in their log, the
files are there), and their rename edits the asked file only — the other file kept calling
`greet`, and the rename said it was done. Such a rename is refused now, nothing written;
reading actions still answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.lsp.answers import Failed
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import text_of
from tests.lsp.real_servers import SERVERS


@pytest.mark.parametrize("name", ["basedpyright", "pyright"])
def test_a_server_blind_to_the_project_renames_nothing(tmp_path: Path, name: str) -> None:
    [server] = [s for s in SERVERS if s.name == name]
    server.require()
    folder = tmp_path / "what?"
    folder.mkdir()
    project = server.copy_project(folder)
    before = {p.name: p.read_bytes() for p in project.iterdir()}
    workspace = LspWorkspace([server.spec], project)
    try:
        answer = workspace.execute(LspQuery("rename", server.library, "greet", new_name="salute"))
        hover = text_of(workspace.execute(LspQuery("hover", server.library, "greet")))
    finally:
        workspace.close()
    assert answer == Failed(
        f"[lsp: rename refused: {name} found no source files in the project (its log said so), "
        "so its rename would reach the open files only — nothing was written]"
    )
    assert {p.name: p.read_bytes() for p in project.iterdir()} == before
    assert "greet" in hover and "str" in hover
