"""didSave goes to the servers that ask for it, and to no other, on real servers
seen through a recorder in the middle of the pipe (fixtures/wire_recorder.py).

clangd announces `textDocumentSync.save` and rebuilds a file on save; basedpyright and
typescript-language-server announce no save option. A file is rewritten by bash between two
diagnostics calls: the second answer names the new error, and the wire shows the didChange
followed by a didSave only where the server asked for it.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mm_tui.lsp.answers import Text
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of
from tests.lsp.real_servers import SERVERS, RealServer

#: Each server, and the fix that makes its deliberate error's file clean.
CASES = {
    "clangd": ("greet(42)", 'greet("x")'),
    "basedpyright": ("count: int", "count: str"),
    "typescript-language-server": ("broken: number", "broken: string"),
}


def recorded(server: RealServer, log: Path) -> LspServerSpec:
    recorder = (sys.executable, str(FIXTURES / "wire_recorder.py"), str(log))
    spec = server.spec
    return LspServerSpec(
        name=spec.name, command=(*recorder, *spec.command), extensions=spec.extensions
    )


def wire(log: Path) -> list[tuple[str, dict[str, Any]]]:
    lines = log.read_text().splitlines()
    return [(entry["from"], entry["message"]) for entry in map(json.loads, lines)]


def save_option(messages: list[tuple[str, dict[str, Any]]]) -> object:
    """The `textDocumentSync.save` the server announced in its initialize answer."""
    for side, message in messages:
        result = message.get("result")
        if side == "server" and isinstance(result, dict) and "capabilities" in result:
            sync = result["capabilities"].get("textDocumentSync")
            return sync.get("save") if isinstance(sync, dict) else None
    raise AssertionError("no initialize answer on the wire")


@pytest.mark.parametrize("name", sorted(CASES))
def test_did_save_follows_a_change_made_by_bash_only_when_the_server_asked(
    tmp_path: Path, name: str
) -> None:
    [server] = [s for s in SERVERS if s.name == name]
    server.require()
    project = server.copy_project(tmp_path / "project")
    bad, good = CASES[name]
    clean_text = server.bad_text.replace(bad, good)
    (project / server.bad_file).write_text(clean_text)
    log = tmp_path / "wire.jsonl"
    workspace = LspWorkspace([recorded(server, log)], project)
    try:
        # A first call loads the project (typescript-language-server may take over 3 s).
        loaded = workspace.execute(LspQuery("definition", server.main, "greet"))
        assert isinstance(loaded, Text), loaded
        query = LspQuery("diagnostics", server.bad_file)
        assert text_of(workspace.execute(query)).startswith(
            f"no diagnostics: {server.bad_file} is clean"
        )
        write = f"printf '%s' {shlex.quote(server.bad_text)} > {server.bad_file}"
        subprocess.run(["bash", "-c", write], cwd=project, check=True)
        lines = text_of(workspace.execute(query)).splitlines()
    finally:
        workspace.close()
    assert any(line.startswith(server.bad_place) for line in lines[1:]), lines
    messages = wire(log)
    uri = (workspace.root / server.bad_file).as_uri()
    sent = [
        (message.get("method"), message.get("params") or {})
        for side, message in messages
        if side == "client"
    ]
    about_the_file = [
        (method, params)
        for method, params in sent
        if isinstance(params.get("textDocument"), dict) and params["textDocument"]["uri"] == uri
    ]
    changed = [
        index
        for index, (method, params) in enumerate(about_the_file)
        if method == "textDocument/didChange"
        and params["contentChanges"][-1]["text"] == server.bad_text
    ]
    assert len(changed) == 1, about_the_file
    saves = [method for method, _ in sent if method == "textDocument/didSave"]
    if name == "clangd":
        assert save_option(messages) is True  # clangd asked: {"save": true}
        method, params = about_the_file[changed[0] + 1]
        assert (method, params.get("text")) == ("textDocument/didSave", None)
        assert saves == ["textDocument/didSave"]  # the one change, the one save
    else:
        assert save_option(messages) is None  # it did not ask
        assert saves == []
