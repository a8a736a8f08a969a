"""A rename never edits outside the project root (SPEC §6), and never leaves code broken
because of it, on real servers: the library file is a symbolic link to a file
outside the project.

Asked from the library, every server wants to edit the real file: refused whole. Asked from
the main file, clangd renamed the two calls in main.c and left the declaration in the linked
header (its references leave out a header it did not index): it is refused now, from its
definition's place. typescript-language-server bridges the names instead
(`import { greet as salute }`), which compiles: that rename stands.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.real_servers import SERVERS, RealServer

BY_NAME = {server.name: server for server in SERVERS}


def linked_project(tmp_path: Path, server: RealServer) -> tuple[Path, Path]:
    """The server's project with its library moved out and linked back in."""
    server.require()
    project = server.copy_project(tmp_path / "project")
    outside = tmp_path / "outside" / server.library
    outside.parent.mkdir()
    shutil.move(project / server.library, outside)
    (project / server.library).symlink_to(outside)
    return project, outside


def files(project: Path, outside: Path) -> dict[str, bytes]:
    found = {p.name: p.read_bytes() for p in project.iterdir() if p.is_file()}
    return {**found, "outside": outside.read_bytes()}


@pytest.mark.parametrize("name", ["basedpyright", "clangd", "gopls"])
def test_a_rename_reaching_a_linked_file_outside_the_root_writes_nothing(
    tmp_path: Path, name: str
) -> None:
    server = BY_NAME[name]
    project, outside = linked_project(tmp_path, server)
    before = files(project, outside)
    workspace = LspWorkspace([server.spec], project)
    try:
        from_library = workspace.execute(
            LspQuery("rename", server.library, "greet", new_name="salute")
        )
        from_main = workspace.execute(LspQuery("rename", server.main, "greet", new_name="salute"))
    finally:
        workspace.close()
    refused = f"[lsp: rename refused: the server wanted to edit {outside}, outside the project root — nothing was written]"
    assert from_library == Failed(refused)
    if name == "clangd":  # its edits stop at main.c: the declaration would keep the old name
        line = next(
            number
            for number, text in enumerate(outside.read_text().splitlines(), 1)
            if "greet(" in text
        )
        column = outside.read_text().splitlines()[line - 1].index("greet(") + 1
        assert from_main == Failed(
            "[lsp: rename refused: the symbol is also declared or used at 1 place(s) outside "
            f"the project root, which a rename never edits ({outside}:{line}:{column}) — "
            "nothing was written]"
        )
    else:
        assert from_main == Failed(refused)
    assert files(project, outside) == before
    assert (project / server.library).is_symlink()


def test_typescript_bridging_the_names_at_the_import_is_a_whole_rename(tmp_path: Path) -> None:
    server = BY_NAME["typescript-language-server"]
    project, outside = linked_project(tmp_path, server)
    library = outside.read_bytes()
    main = (project / server.main).read_text()
    workspace = LspWorkspace([server.spec], project)
    try:
        answer = workspace.execute(LspQuery("rename", server.main, "greet", new_name="salute"))
    finally:
        workspace.close()
    assert isinstance(answer, Text), answer
    assert (project / server.main).read_text() == main.replace(
        "import { greet }", "import { greet as salute }"
    ).replace('greet("', 'salute("')
    assert outside.read_bytes() == library
