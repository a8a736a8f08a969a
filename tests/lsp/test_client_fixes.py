"""The client's fixes for real servers, each on its own: registrations, encodings, renames that
never corrupt, the stat-first reader, readable diagnostics."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import pytest
from lsprotocol.types import DidSaveTextDocumentParams

from mm_tui.lsp import disk as disk_module
from mm_tui.lsp.answers import Failed
from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.defaults import BASEDPYRIGHT
from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.documents import OpenDocuments
from mm_tui.lsp.encoding_check import announced_encoding, verified_encoding
from mm_tui.lsp.formatting import readable_message
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.rename_write import FilesRefused, write_changes
from mm_tui.lsp.server_requests import ServerRequestHandlers
from mm_tui.lsp.server_state import ServerState
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.text import UTF8, UTF16, UTF32
from mm_tui.lsp.workspace import LspWorkspace
from mm_tui.lsp.workspace_edit import EditRefused, FileChange, plan_changes
from tests.lsp.conftest import FIXTURES, rewrite_in_place_keeping_size_and_time, text_of
from tests.lsp.real_servers import LANGS

LINE = 'banner = "café 🎉 " + greet("world")'  # greet: character 21, UTF-16 22, UTF-8 25


@contextmanager
def workspace_of(fixture: str, root: Path, *, diagnostics: float) -> Iterator[LspWorkspace]:
    """A workspace on `root` whose one server, for `.py` files, is the fake `fixtures/<fixture>`,
    counted as settled at once (indexing 0), as a server is after its start-up; closed after."""
    command = (sys.executable, str(FIXTURES / fixture))
    spec = LspServerSpec(name=Path(fixture).stem, command=command, extensions=(".py",))
    workspace = LspWorkspace([spec], root, Timeouts(indexing=0.0, diagnostics=diagnostics))
    try:
        yield workspace
    finally:
        workspace.close()


def test_a_method_registered_twice_stays_offered_when_one_registration_goes() -> None:
    async def scenario() -> None:
        state = ServerState(lambda key: 0, lambda: False, deque())
        state.register("a", "textDocument/diagnostic", {})
        state.register("b", "textDocument/diagnostic", {})
        state.unregister("a", "textDocument/diagnostic")  # what pyright does
        assert state.registered("textDocument/diagnostic")
        state.unregister("b", "textDocument/diagnostic")
        assert not state.registered("textDocument/diagnostic")

    asyncio.run(scenario())


def test_registrations_numbered_instead_of_named_are_kept_apart_too() -> None:
    # The protocol says ids are strings; a server numbering them 1 and 2 had both kept under
    # the method's name, so unregistering 1 dropped the pull diagnostics 2 still offered.
    state = ServerState(lambda key: 0, lambda: False, deque())
    connection = SimpleNamespace(state=state, spec=BASEDPYRIGHT, root=Path("."))
    handlers = ServerRequestHandlers(connection)
    method = "textDocument/diagnostic"
    handlers.register_capability(
        {"registrations": [{"id": 1, "method": method}, {"id": 2, "method": method}]}
    )
    handlers.unregister_capability({"unregisterations": [{"id": 1, "method": method}]})
    assert state.registered(method)
    handlers.unregister_capability({"unregisterations": [{"id": 2, "method": method}]})
    assert not state.registered(method)


def test_servers_known_to_count_code_points_are_listed_by_command_and_by_name() -> None:
    assert announced_encoding(UTF16, "", "/usr/bin/jedi-language-server") == UTF32
    assert announced_encoding(None, "pylsp", "python3") == UTF32
    assert announced_encoding(UTF8, "gopls", "gopls") == UTF8
    assert announced_encoding(None, "", "clangd") == UTF16


@pytest.mark.parametrize(("encoding", "start"), [(UTF32, 21), (UTF16, 22), (UTF8, 25)])
def test_the_encoding_a_server_really_counts_in_is_found_from_its_ranges(
    encoding: str, start: int
) -> None:
    span = (LINE, start, start + 5)
    others = [e for e in (UTF8, UTF16, UTF32) if e != encoding]
    for announced in others:
        assert verified_encoding([span], "greet", announced) == encoding
    assert verified_encoding([span], "greet", encoding) is None
    assert verified_encoding([("greet(1)", 0, 5)], "greet", UTF8) is None  # ASCII tells nothing


def test_a_rename_edit_landing_beside_the_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text(LINE + "\n")
    edit = {"range": {"start": {"line": 0, "character": 21}, "end": {"line": 0, "character": 26}}}
    answer = {"changes": {(tmp_path / "m.py").as_uri(): [{**edit, "newText": "salute"}]}}
    with pytest.raises(EditRefused, match="replaces ' gree', not 'greet'"):
        plan_changes(answer, tmp_path, UTF16, ("greet", "salute"))  # code points, said UTF-16
    [change] = plan_changes(answer, tmp_path, UTF32, ("greet", "salute"))
    assert change.new_text == LINE.replace("greet", "salute") + "\n"


def test_a_file_that_cannot_be_written_stops_the_rename_before_any_write(tmp_path: Path) -> None:
    first = tmp_path / "a.py"
    first.write_text("greet = 1\n")
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    changes = [
        FileChange(first, "greet = 1\n", "salute = 1\n", 1),
        FileChange(blocker / "b.py", "", "salute\n", 1),  # its parent is a file: cannot write
    ]
    with pytest.raises(FilesRefused, match="b.py: its folder was replaced"):
        write_changes(changes, "salute")
    assert first.read_text() == "greet = 1\n"


def test_a_rename_touching_a_read_only_file_writes_nothing(tmp_path: Path) -> None:
    project = tmp_path / "python"
    shutil.copytree(LANGS / "python", project)
    main = project / "main.py"
    before = {p.name: p.read_text() for p in project.glob("*.py")}
    os.chmod(main, 0o444)
    workspace = LspWorkspace([BASEDPYRIGHT], project)
    try:
        answer = workspace.execute(LspQuery("rename", "greetings.py", "greet", new_name="salute"))
    finally:
        workspace.close()
    assert answer == Failed(
        "[lsp: rename refused: main.py is read-only (mode 444) — nothing was written]"
    )
    assert {p.name: p.read_text() for p in project.glob("*.py")} == before


def test_an_old_unchanged_file_is_not_read_again_and_a_change_is_seen(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    old = time.time() - 10
    os.utime(path, (old, old))
    disk = DiskTexts()
    first = disk.read(path)
    assert disk.read(path) is first  # stat said unchanged: the same text, not re-read
    path.write_text("x = 22\n")
    assert disk.read(path) == "x = 22\n"


def test_a_file_written_just_now_is_read_again_even_with_the_same_stamp(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n")
    disk = DiskTexts()
    first = disk.read(path)
    assert disk.read(path) is not first  # too recent to trust its timestamp: re-read


def test_diagnostic_messages_stay_on_one_readable_line_with_relative_paths() -> None:
    root = Path("/work/project")
    message = (
        'Type "str" is not assignable to declared type "int"\n'
        '  "str" is not assignable to "int"\n\n/work/project/lib/greet.h:2:45:\nnote: here'
    )
    assert readable_message(message, root) == (
        'Type "str" is not assignable to declared type "int"; "str" is not assignable to '
        '"int"; lib/greet.h:2:45: note: here'
    )


def test_a_server_that_publishes_only_on_open_is_sent_the_changed_file_again(
    tmp_path: Path,
) -> None:
    # Its last publication was about the earlier text: it is never shown as the current
    # one. The file is closed and opened again, and the server's new word is about it.
    (tmp_path / "m.py").write_text("x = 1\n")
    with workspace_of("publish_once_server.py", tmp_path, diagnostics=0.5) as workspace:
        first = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
        (tmp_path / "m.py").write_text("x = 2\n")
        second = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
        third = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
    assert first == "no diagnostics: m.py is clean"
    assert second == "no diagnostics: m.py is clean"
    assert third == "no diagnostics: m.py is clean (as last published)"  # unchanged since


def test_a_late_unversioned_publication_about_the_earlier_text_is_not_taken_as_current(
    tmp_path: Path,
) -> None:
    # The server's first word after the change is about the earlier text and carries no
    # version: taken as current, the error was shown at line 1, which no longer holds it.
    (tmp_path / "m.py").write_text("bad = 1\n")
    with workspace_of("late_publication_server.py", tmp_path, diagnostics=3.0) as workspace:
        first = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
        (tmp_path / "m.py").write_text("x = 1\n\nbad = 2\n")
        second = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
    assert first == "1 diagnostic(s) in m.py:\nerror m.py:1:1 bad on line 1"
    assert second == "1 diagnostic(s) in m.py:\nerror m.py:3:1 bad on line 3"


class Channel:
    """What OpenDocuments sends through, recorded."""

    def __init__(self, sync: object) -> None:
        self.capabilities: dict[str, object] = {"textDocumentSync": sync}
        self.sent: list[tuple[str, object]] = []

    def notify(self, method: str, params: object) -> None:
        self.sent.append((method, params))

    def registered_options(self, method: str) -> list[object]:
        return []


@pytest.mark.parametrize(
    ("save", "expected"), [(None, []), ({}, [None]), ({"includeText": True}, ["x = 2\n"])]
)
def test_did_save_follows_each_change_when_the_server_asks_for_it(
    tmp_path: Path, save: object, expected: list[str | None]
) -> None:
    path = tmp_path / "m.py"
    channel = Channel({"change": 1, "save": save} if save is not None else {"change": 1})
    documents = OpenDocuments(channel, DiskTexts())
    documents.sync(path, "x = 1\n")
    documents.sync(path, "x = 2\n")
    methods = [method for method, _ in channel.sent]
    saved = [
        params.text
        for method, params in channel.sent
        if method == "textDocument/didSave" and isinstance(params, DidSaveTextDocumentParams)
    ]
    assert methods[:2] == ["textDocument/didOpen", "textDocument/didChange"]
    assert saved == expected


def test_a_warm_call_reads_no_file_and_stats_each_open_document_once(
    own_workspace: LspWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before each request every open document is checked against the disk, by
    # its stat alone when it did not change: no read, no comparison of its text.
    old = time.time() - 10  # past disk.py's racy second: trusted from a stat
    for path in own_workspace.root.glob("*.py"):
        os.utime(path, (old, old))
    query = LspQuery("definition", "app.py", symbol="greet")
    answer = "greetings.py:5:5  def greet(name: str) -> str:"
    assert text_of(own_workspace.execute(query)) == answer  # opens app.py, then greetings.py
    reads: list[str] = []
    stats: list[str] = []
    real_read, real_stamp = disk_module.read_text, disk_module._stamp
    monkeypatch.setattr(disk_module, "read_text", lambda p: reads.append(str(p)) or real_read(p))
    monkeypatch.setattr(disk_module, "_stamp", lambda p: stats.append(str(p)) or real_stamp(p))
    for _ in range(3):
        assert text_of(own_workspace.execute(query)) == answer
    assert reads == []
    assert sorted(Path(p).name for p in stats) == ["app.py"] * 3 + ["greetings.py"] * 3


def test_a_warm_file_rewritten_in_place_with_its_size_and_time_kept_is_sent_again(
    own_workspace: LspWorkspace,
) -> None:
    # Attack on the warm path's stat-first reading: after two warm calls the file is trusted;
    # then it is rewritten in place, same size, its modification time put back. Its change
    # time still moved, so the next call must read it, send it, and answer from it.
    app = own_workspace.root / "app.py"
    query = LspQuery("definition", "app.py", symbol="greet")
    time.sleep(1.1)  # the copy is old enough to be trusted without a read (disk.py)
    for _ in range(2):
        assert (
            text_of(own_workspace.execute(query))
            == "greetings.py:5:5  def greet(name: str) -> str:"
        )
    local = "def greet(x):\n    return x\n\n\nbanner = greet('world')\n"
    rewrite_in_place_keeping_size_and_time(app, local)
    assert text_of(own_workspace.execute(query)) == "app.py:1:5  def greet(x):"
