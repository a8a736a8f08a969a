"""Capability registrations keyed by id, seen on the wire: a server registers pull
diagnostics and didSave twice each, under two ids, then unregisters one id at a time. What
the client sends after each step is read back from the server (fixtures/registering_server.py
answers each hover with what it received since the last one)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of

SPEC = LspServerSpec(
    name="registering",
    command=(sys.executable, str(FIXTURES / "registering_server.py")),
    extensions=(".py",),
)


def next_step(workspace: LspWorkspace) -> list[list[object]]:
    """Run the server's next step; what it received since the previous one, in order."""
    report = json.loads(text_of(workspace.execute(LspQuery("hover", "m.py", "x"))))
    received = report["received"]
    assert received[-1][0] in (
        "textDocument/hover",
        "answer to client/registerCapability",
        "answer to client/unregisterCapability",
    )
    return [entry for entry in received if entry[0] != "textDocument/hover"]


def diagnostics_after_writing(workspace: LspWorkspace, text: str) -> str:
    (workspace.root / "m.py").write_text(text)
    return text_of(workspace.execute(LspQuery("diagnostics", "m.py")))


def test_a_method_registered_under_two_ids_stays_in_effect_until_both_go(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    workspace = LspWorkspace([SPEC], tmp_path, Timeouts(indexing=0.0, diagnostics=5.0))
    try:
        # Step 1: pull-a, pull-b, save-a (with text), save-b (without); the client says yes.
        assert next_step(workspace)[-1] == ["answer to client/registerCapability", None]
        assert diagnostics_after_writing(workspace, "x = 2\n") == (
            "2 diagnostic(s) in m.py:\nerror m.py:1:1 pulled from a\nerror m.py:1:1 pulled from b"
        )
        # Step 2 (pull-a and save-a go) reports what the last call sent.
        assert next_step(workspace) == [
            ["textDocument/didChange", "x = 2\n"],
            ["textDocument/didSave", "x = 2\n"],  # save-a asked for the text
            ["textDocument/diagnostic", "a"],
            ["textDocument/diagnostic", "b"],
            ["answer to client/unregisterCapability", None],
        ]
        assert diagnostics_after_writing(workspace, "x = 3\n") == (
            "1 diagnostic(s) in m.py:\nerror m.py:1:1 pulled from b"
        )
        # Step 3 (pull-b and save-b go): b's registrations were still in effect.
        assert next_step(workspace) == [
            ["textDocument/didChange", "x = 3\n"],
            ["textDocument/didSave", None],  # save-b: no text
            ["textDocument/diagnostic", "b"],
            ["answer to client/unregisterCapability", None],
        ]
        # Both ids gone: no pull, no didSave; the pushed diagnostics are read.
        assert diagnostics_after_writing(workspace, "x = 4\n") == (
            "1 diagnostic(s) in m.py:\nerror m.py:1:1 pushed"
        )
        assert next_step(workspace) == [["textDocument/didChange", "x = 4\n"]]
    finally:
        workspace.close()
