"""A rename whose written result lacks the new name where the server put it is reported as
failed, in one line, and every file it wrote is restored byte for byte (a rename
never corrupts), over the wire from a fake server (fixtures/splitting_rename_server.py).

Its edits come diff-style (neither is the new name), so nothing can be checked before the
files are written; in one file they land two columns to the right. That file already holds
the new name elsewhere (a comment): finding it anywhere in the file is not enough.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mm_tui.lsp.answers import Failed, Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES

FILES = {
    "a.py": b"from c import greet\r\n\r\nprint(greet(1))\r\n",  # CRLF line ends
    "b.py": b"from c import greet\n\nvalue = greet(2)",  # no newline at its end
    "c.py": b"# call salute later\ndef greet(n):\n    return n\n",
}


def rename_with(
    tmp_path: Path, shifted: str, shift: int, written: list[str] | None = None
) -> Text | Failed:
    """The rename of greet to salute; `written` gets the name of each file about to be
    written (the hook the agent keeps files for `/undo` with)."""
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    command = (sys.executable, str(FIXTURES / "splitting_rename_server.py"), shifted, str(shift))
    spec = LspServerSpec(name="splitting", command=command, extensions=(".py",))
    workspace = LspWorkspace([spec], tmp_path)
    try:
        query = LspQuery("rename", "c.py", "greet", new_name="salute")
        before_write = None if written is None else (lambda path: written.append(path.name))
        answer = workspace.execute(query, before_write=before_write)
    finally:
        workspace.close()
    assert isinstance(answer, Text | Failed)
    return answer


def test_edits_beside_the_name_are_found_after_writing_and_every_file_restored(
    tmp_path: Path,
) -> None:
    written: list[str] = []
    answer = rename_with(tmp_path, "c.py", 2, written)
    assert written == ["a.py", "b.py", "c.py"]  # all three were written, then restored
    assert answer == Failed(
        "[lsp: rename failed: c.py:2 does not contain salute where the server's edit put it "
        "— every file was restored]"
    )
    assert "\n" not in answer.text
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == FILES  # no temporary left


def test_the_same_diff_style_edits_in_place_rename_every_file_keeping_its_line_ends(
    tmp_path: Path,
) -> None:
    answer = rename_with(tmp_path, "c.py", 0)
    assert answer == Text(
        "renamed to salute: 10 edit(s) in 3 file(s)\na.py: 4 edit(s)\nb.py: 4 edit(s)\n"
        "c.py: 2 edit(s)",
        diff=answer.diff,
    )
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {
        name: data.replace(b"greet", b"salute") for name, data in FILES.items()
    }
