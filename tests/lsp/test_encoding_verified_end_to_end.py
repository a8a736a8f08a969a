"""A server announcing UTF-16 while counting code points, on no list, is caught by its first
answer: the fake (fixtures/code_points_server.py) answers in code points.

Without the check, a rename on the line after "café 🎉 " would land one unit to the right
of the name per emoji (UTF-16 counts 🎉 as two) and write broken code.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.lsp.answers import Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of

LIBRARY = "def greet(name):\n    return name\n"
MAIN = 'from lib import greet\n\nbanner = "café 🎉🎉 " + greet("world")\nprint(greet("again"))\n'


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[LspWorkspace]:
    (tmp_path / "lib.py").write_text(LIBRARY)
    (tmp_path / "main.py").write_text(MAIN)
    command = (sys.executable, str(FIXTURES / "code_points_server.py"))
    spec = LspServerSpec(name="counts", command=command, extensions=(".py",))
    started = LspWorkspace([spec], tmp_path)
    yield started
    started.close()


def test_a_rename_after_emojis_lands_on_the_name_and_later_columns_are_code_points(
    workspace: LspWorkspace,
) -> None:
    answer = workspace.execute(LspQuery("rename", "main.py", "greet", line=3, new_name="salute"))
    assert isinstance(answer, Text), answer
    assert answer.text.splitlines()[0] == "renamed to salute: 4 edit(s) in 2 file(s)"
    greet = re.compile(r"\bgreet\b")
    assert (workspace.root / "main.py").read_text() == greet.sub("salute", MAIN)
    assert (workspace.root / "lib.py").read_text() == greet.sub("salute", LIBRARY)
    # The last letter of the name: in UTF-16 units it would lie past the name (two emojis
    # before it count four units), in code points it is inside.
    line = (workspace.root / "main.py").read_text().splitlines()[2]
    column = line.index("salute") + 6
    answer = workspace.execute(LspQuery("definition", "main.py", line=3, column=column))
    assert text_of(answer) == "lib.py:1:5  def salute(name):"
