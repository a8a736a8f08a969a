"""A rename answered from a partial index is never reported as done.

The fake server (fixtures/partial_index_server.py) renames in the asked file only while it
indexes, as clangd and typescript-language-server did under load. Nothing here depends on
speed: the server decides which answers are partial, the client must notice.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES

LIBRARY = "def greet(name):\n    return name\n"
MAIN = "from lib import greet\n\nprint(greet('a'), greet('b'))\n"


def project(tmp_path: Path) -> Path:
    (tmp_path / "lib.py").write_text(LIBRARY)
    (tmp_path / "main.py").write_text(MAIN)
    return tmp_path


Start = Callable[..., LspWorkspace]


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Start]:
    started: list[LspWorkspace] = []

    def run(*args: str, timeouts: Timeouts | None = None) -> LspWorkspace:
        command = (sys.executable, str(FIXTURES / "partial_index_server.py"), *args)
        spec = LspServerSpec(name="partial", command=command, extensions=(".py",))
        workspace = LspWorkspace([spec], project(tmp_path), timeouts)
        started.append(workspace)
        return workspace

    yield run
    for workspace in started:
        workspace.close()


def rename(workspace: LspWorkspace) -> Text | Failed:
    answer = workspace.execute(LspQuery("rename", "lib.py", "greet", new_name="salute"))
    assert isinstance(answer, Text | Failed)
    return answer


COMPLETE = "renamed to salute: 4 edit(s) in 2 file(s)\nlib.py: 1 edit(s)\nmain.py: 3 edit(s)"


@pytest.mark.parametrize("mode", ["progress", "progress-only"])
def test_a_rename_answered_while_the_server_indexes_is_asked_again_after(
    start: Start, mode: str, tmp_path: Path
) -> None:
    # The server begins indexing when asked and answers from the asked file alone; without
    # references (progress-only), its progress report is the only sign.
    workspace = start(mode)
    answer = rename(workspace)
    assert isinstance(answer, Text), answer
    assert answer.text == COMPLETE
    assert (tmp_path / "main.py").read_text() == MAIN.replace("greet", "salute")
    assert (tmp_path / "lib.py").read_text() == LIBRARY.replace("greet", "salute")


def test_a_rename_missing_places_its_references_list_is_asked_again(
    start: Start, tmp_path: Path
) -> None:
    workspace = start("quiet", "2")  # no progress ever; the third answer is whole
    answer = rename(workspace)
    assert isinstance(answer, Text), answer
    assert answer.text == COMPLETE
    assert (tmp_path / "main.py").read_text() == MAIN.replace("greet", "salute")


def test_a_rename_that_stays_incomplete_is_refused_naming_the_missed_places(
    start: Start, tmp_path: Path
) -> None:
    workspace = start("quiet", "1000", timeouts=Timeouts(indexing=1.0))
    answer = rename(workspace)
    assert answer == Failed(
        "[lsp: rename refused: partial's edits leave the name unchanged at 3 of the 4 places "
        "its references list (main.py:1:17, main.py:3:7, main.py:3:19) — nothing was written]"
    )
    assert (tmp_path / "lib.py").read_text() == LIBRARY
    assert (tmp_path / "main.py").read_text() == MAIN
