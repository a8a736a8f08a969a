"""Every action on every real server the project tests, each on its two-file project.

Expected answers are computed from the fixture files themselves: a place is
`path:line:column  <source line>` with the column counted in characters, so the line after
"café 🎉 " proves the position encoding both ways (sent and read back).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import text_of
from tests.lsp.real_servers import LANGS, SERVERS, RealServer

#: greet as code: not "./greet" (a module path) nor "greet.h" (a file name).
WORD = re.compile(r"(?<![\w$/])greet(?![\w$.])")


def places_of_greet(server: RealServer, file: str, root: Path = LANGS) -> list[str]:
    """Every code line of `file` naming greet, as the tool shows a place."""
    lines = (root / server.language / file).read_text().splitlines()
    found = []
    for number, line in enumerate(lines, 1):
        code = line.lstrip()
        if code.startswith(("//", "#", "/*", '"""', "!")) and not code.startswith("#include"):
            continue
        for match in WORD.finditer(line):
            found.append(f"{file}:{number}:{match.start() + 1}  {line.strip()}")
    return found


def definition_place(server: RealServer) -> str:
    lines = (LANGS / server.language / server.library).read_text().splitlines()
    number = next(i for i, line in enumerate(lines, 1) if WORD.search(line) and "(" in line)
    [place] = [p for p in places_of_greet(server, server.library) if f":{number}:" in p]
    return place


def accented_line(server: RealServer) -> tuple[int, int]:
    """The 1-based line and character column of greet after "café 🎉 " in the main file."""
    lines = (LANGS / server.language / server.main).read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if "café" in line)
    match = WORD.search(lines[number], lines[number].index("café"))
    assert match is not None
    return number + 1, match.start() + 1


@pytest.fixture(params=SERVERS, ids=lambda server: server.name, scope="module")
def server(request: pytest.FixtureRequest) -> RealServer:
    real: RealServer = request.param
    real.require()
    return real


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, server: RealServer) -> Path:
    return server.copy_project(tmp_path_factory.mktemp(server.name))


@pytest.fixture(scope="module")
def workspace(project: Path, server: RealServer) -> Iterator[LspWorkspace]:
    started = LspWorkspace([server.spec], project)
    yield started
    started.close()


@pytest.fixture
def own(tmp_path: Path, server: RealServer) -> Iterator[LspWorkspace]:
    started = LspWorkspace([server.spec], server.copy_project(tmp_path))
    yield started
    started.close()


def ask(workspace: LspWorkspace, action: str, path: str, **fields: Any) -> str:
    query = LspQuery(action, path, **fields)
    return text_of(workspace.execute(query))


def test_definition_by_symbol_names_the_declaration(
    workspace: LspWorkspace, server: RealServer
) -> None:
    assert ask(workspace, "definition", server.main, symbol="greet") == definition_place(server)


def test_definition_at_a_column_after_an_accent_and_an_emoji(
    workspace: LspWorkspace, server: RealServer
) -> None:
    line, column = accented_line(server)
    answer = ask(workspace, "definition", server.main, line=line, column=column)
    assert answer == definition_place(server)


def test_references_list_the_uses_in_both_files_with_character_columns(
    workspace: LspWorkspace, server: RealServer
) -> None:
    lines = ask(workspace, "references", server.library, symbol="greet").splitlines()
    assert lines[0] == f"{len(lines) - 1} reference(s):"
    expected = places_of_greet(server, server.main) + [definition_place(server)]
    assert set(expected) <= set(lines[1:]), lines


def test_hover_on_the_accented_line_shows_the_signature(
    workspace: LspWorkspace, server: RealServer
) -> None:
    line, _ = accented_line(server)
    answer = ask(workspace, "hover", server.main, symbol="greet", line=line)
    assert "greet" in answer and server.hover_says in answer


def test_symbols_outline_the_library(workspace: LspWorkspace, server: RealServer) -> None:
    number = definition_place(server).split(":")[1]
    lines = ask(workspace, "symbols", server.library).splitlines()
    assert any(re.fullmatch(rf" *function greet(  \[.*\])?  line {number}", x) for x in lines)


def test_diagnostics_name_the_deliberate_error_with_a_relative_path(
    workspace: LspWorkspace, project: Path, server: RealServer
) -> None:
    (project / server.bad_file).write_text(server.bad_text)
    lines = ask(workspace, "diagnostics", server.bad_file).splitlines()
    assert re.fullmatch(rf"\d+ diagnostic\(s\) in {re.escape(server.bad_file)}:", lines[0])
    assert any(line.startswith(server.bad_place) for line in lines[1:]), lines
    assert not any(str(project) in line for line in lines)


def test_diagnostics_of_the_clean_main_file_say_clean(
    workspace: LspWorkspace, server: RealServer
) -> None:
    answer = ask(workspace, "diagnostics", server.main)
    assert answer.startswith(f"no diagnostics: {server.main} is clean"), answer


def test_rename_across_the_two_files_is_refused_on_a_read_only_file_then_right_on_disk(
    own: LspWorkspace, server: RealServer
) -> None:
    root = own.root
    main_before = (root / server.main).read_text()
    library_before = (root / server.library).read_text().splitlines()
    # First with the main file read-only: refused as edit_file refuses it, nothing written.
    os.chmod(root / server.main, 0o444)
    refused = own.execute(LspQuery("rename", server.library, "greet", new_name="salute"))
    assert refused == Failed(
        f"[lsp: rename refused: {server.main} is read-only (mode 444) — nothing was written]"
    )
    assert (root / server.main).read_text() == main_before
    assert (root / server.library).read_text().splitlines() == library_before
    os.chmod(root / server.main, 0o644)
    answer = own.execute(LspQuery("rename", server.library, "greet", new_name="salute"))
    assert isinstance(answer, Text), answer
    assert re.match(r"renamed to salute: \d+ edit\(s\) in 2 file\(s\)\n", answer.text)
    assert (root / server.main).read_text() == WORD.sub("salute", main_before)
    number = int(definition_place(server).split(":")[1])
    library_after = (root / server.library).read_text().splitlines()
    assert library_after[number - 1] == WORD.sub("salute", library_before[number - 1])


def test_a_file_changed_by_bash_then_by_an_editor_between_calls_is_resent(
    own: LspWorkspace, server: RealServer
) -> None:
    # The library was never asked about, only pointed at by an answer; bash then inserts
    # three lines at its top. The next definition, asked from the main file, must see them.
    root = own.root
    assert ask(own, "definition", server.main, symbol="greet") == definition_place(server)
    comment = {"python": "#", "bash": "#", "fortran": "!", "c": "/* */ //"}.get(
        server.language, "//"
    )
    subprocess.run(
        [
            "bash",
            "-c",
            f"sed -i '1i {comment} one\\n{comment} two\\n{comment} three' {server.library}",
        ],
        cwd=root,
        check=True,
    )
    path, number, rest = definition_place(server).split(":", 2)
    assert ask(own, "definition", server.main, symbol="greet") == f"{path}:{int(number) + 3}:{rest}"
    # Then the person's editor saves it as vim and most editors do: a new file renamed over
    # the old one (a new inode), two more lines at its top.
    library = root / server.library
    saved = library.with_name(f".{library.name}.swp")
    saved.write_text(f"{comment} four\n{comment} five\n" + library.read_text())
    os.replace(saved, library)
    assert ask(own, "definition", server.main, symbol="greet") == f"{path}:{int(number) + 5}:{rest}"
