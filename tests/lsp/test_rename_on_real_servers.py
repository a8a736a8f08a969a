"""Rename against pylsp and basedpyright: edits written to disk, the server resynced.

pylsp (jedi) answers with `documentChanges` replacing whole files; basedpyright answers with
`changes` holding one edit per occurrence, in UTF-16 columns: both forms are applied here.
"""

from __future__ import annotations

import re

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import text_of

RENAMED = re.compile(
    r"renamed to salute: (\d+) edit\(s\) in 2 file\(s\)\n"
    r"app\.py: (\d+) edit\(s\)\ngreetings\.py: (\d+) edit\(s\)"
)


def test_rename_across_two_files_writes_both_and_reports_each(own_workspace: LspWorkspace) -> None:
    root = own_workspace.root
    answer = own_workspace.execute(LspQuery("rename", "app.py", "greet", new_name="salute"))
    assert isinstance(answer, Text), answer
    match = RENAMED.fullmatch(answer.text)
    assert match is not None, answer.text
    total, in_app, in_greetings = map(int, match.groups())
    assert total == in_app + in_greetings
    app = (root / "app.py").read_text()
    assert app.splitlines()[:3] == [
        "from greetings import Person, salute",
        "",
        'banner = "🎉✨ party " + salute("world")',  # UTF-16 columns past an emoji, converted
    ]
    greetings = (root / "greetings.py").read_text()
    assert "def salute(name: str) -> str:" in greetings
    assert "return salute(self.name)" in greetings
    assert answer.diff is not None and "+def salute(name: str) -> str:" in answer.diff


def test_the_server_sees_the_renamed_code_at_once(own_workspace: LspWorkspace) -> None:
    own_workspace.execute(LspQuery("rename", "greetings.py", "greet", new_name="salute"))
    references = text_of(own_workspace.execute(LspQuery("references", "app.py", "salute")))
    assert references.splitlines()[0] == "4 reference(s):"
    assert 'app.py:3:24  banner = "🎉✨ party " + salute("world")' in references


def test_the_several_words_form_takes_the_first_and_last_identifiers(
    own_workspace: LspWorkspace,
) -> None:
    answer = own_workspace.execute(LspQuery("rename", "greetings.py", "Person 10 7 Guest"))
    assert isinstance(answer, Text), answer
    assert answer.text.startswith("renamed to Guest: ")
    assert "class Guest:" in (own_workspace.root / "greetings.py").read_text()
    assert 'Guest("Ada")' in (own_workspace.root / "app.py").read_text()


def test_a_preview_shows_the_diff_and_writes_nothing(own_workspace: LspWorkspace) -> None:
    before = {p.name: p.read_text() for p in own_workspace.root.glob("*.py")}
    answer = own_workspace.preview(LspQuery("rename", "app.py", "greet", new_name="salute"))
    assert isinstance(answer, Text), answer
    assert answer.text.startswith("rename to salute: ")
    assert answer.diff is not None
    assert "-def greet(name: str) -> str:\n+def salute(name: str) -> str:\n" in answer.diff
    assert {p.name: p.read_text() for p in own_workspace.root.glob("*.py")} == before


def test_a_rename_without_new_name_says_how_to_call_again(own_workspace: LspWorkspace) -> None:
    answer = own_workspace.execute(LspQuery("rename", "app.py", "greet"))
    assert answer == Failed(
        '[lsp: rename needs new_name — call lsp again with {"action": "rename", "path": '
        '"app.py", "symbol": "greet", "new_name": "<the new identifier>"}; '
        "do not use edit_file for a rename]"
    )
    assert own_workspace.server_pids() == {}  # refused before any server was started
