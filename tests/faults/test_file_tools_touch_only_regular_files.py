"""File tools touch only what they should and never hang: FIFOs, sockets and
devices get a one-line error at once; a file that changes while the person reads the question
is asked about again; a call reads its file once. Each test fails without its defence."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.events import PermissionAnswer, PermissionRequest, ToolFinished, ToolStatus
from mm_tui.agent.tools import safe_files
from mm_tui.agent.tools.base import ToolContext, ToolResult
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.read_file import ReadFileTool
from mm_tui.agent.tools.write_file import WriteFileTool
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory
from tests.waiting import holds_within

CALLS: dict[str, tuple[Any, dict[str, Any]]] = {
    "read_file": (ReadFileTool(), {}),
    "write_file": (WriteFileTool(), {"content": "x"}),
    "edit_file": (EditFileTool(), {"edits": [{"old": "a", "new": "b"}]}),
}


def run_bounded(tool: Any, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    """Run the tool in a thread; fail (after unblocking it) if it does not answer in 5 s."""
    result: list[ToolResult] = []
    worker = threading.Thread(target=lambda: result.append(tool.run(args, ctx)), daemon=True)
    worker.start()
    worker.join(5)
    if worker.is_alive():
        fifo = ctx.cwd / "pipe"
        if fifo.exists():
            with open(fifo, "wb"):  # let the blocked reader go, so the test ends
                pass
        pytest.fail(f"{tool.name} blocked on a FIFO")
    return result[0]


@pytest.mark.parametrize("name", CALLS)
def test_a_fifo_gets_a_one_line_error_at_once(tmp_path: Path, name: str) -> None:
    os.mkfifo(tmp_path / "pipe")
    tool, extra = CALLS[name]
    result = run_bounded(tool, {"path": "pipe", **extra}, ToolContext(cwd=tmp_path))
    assert result.status is ToolStatus.FAILED
    assert result.output == (
        "[error: pipe is a FIFO (named pipe), not a regular file; the file tools read and "
        "write regular files only]"
    )
    assert (tmp_path / "pipe").is_fifo()  # never replaced by a regular file


@pytest.mark.parametrize("name", CALLS)
def test_a_socket_or_a_device_is_refused(tmp_path: Path, name: str) -> None:
    tool, extra = CALLS[name]
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    try:
        for path, kind in (("sock", "a socket"), ("/dev/zero", "a character device")):
            result = run_bounded(tool, {"path": path, **extra}, ToolContext(cwd=tmp_path))
            assert result.status is ToolStatus.FAILED and f"is {kind}" in result.output
    finally:
        server.close()


def test_a_write_whose_file_changed_under_the_question_is_asked_again(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("v1\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "notes.txt", "content": "mine\n"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[WriteFileTool()], answer=None)

    def answer() -> None:
        first: PermissionRequest = events.wait_for(PermissionRequest)
        target.write_text("someone else's v2\n")  # changes while the person reads
        first.future.set_result(PermissionAnswer.ALLOW_ONCE)
        holds_within(lambda: len(events.of(PermissionRequest)) >= 2, timeout=5, interval=0.05)
        events.of(PermissionRequest)[-1].future.set_result(PermissionAnswer.REJECT)

    threading.Thread(target=answer, daemon=True).start()
    agent.run_turn("write")
    first, second = events.of(PermissionRequest)
    assert "-v1" in (first.diff or "") and "-someone else's v2" in (second.diff or "")
    assert events.of(ToolFinished)[0].status is ToolStatus.REJECTED
    assert target.read_text() == "someone else's v2\n"  # what was not approved is not written


def test_a_write_or_an_edit_reads_its_file_once(
    make_agent: AgentFactory,
    model_server: ScriptedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    reads: list[Path] = []
    real = safe_files.read_regular

    def counting(path: Path, limit: int = safe_files.MAX_EDIT_BYTES) -> bytes:
        reads.append(path)
        return real(path, limit)

    # Both tools read what they plan on through one door (the editor's text, or the disk).
    monkeypatch.setattr("mm_tui.agent.tools.editor_files.read_regular", counting)
    model_server.enqueue(
        Reply(
            tool_calls=[
                ToolCall("edit_file", {"path": "a.txt", "edits": [{"old": "a", "new": "b"}]})
            ]
        ),
        Reply(tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "c\n"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[EditFileTool(), WriteFileTool()])
    agent.run_turn("change")
    assert [e.status for e in events.of(ToolFinished)] == [ToolStatus.DONE, ToolStatus.DONE]
    assert len(events.of(PermissionRequest)) == 2
    assert reads == [tmp_path / "a.txt"] * 2  # once per call, not three times
    assert (tmp_path / "a.txt").read_text() == "c\n"


def test_leftover_temporary_files_of_a_killed_write_are_removed(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    old = tmp_path / "src/.a.py.0badf00d.mm-tmp"
    young = tmp_path / "src/.b.py.12345678.mm-tmp"
    keep = tmp_path / "src/.hidden.mm-tmp.txt"
    for path in (old, young, keep):
        path.write_text("partial")
    os.utime(old, (1, 1))
    removed = safe_files.remove_leftover_temporaries(tmp_path)
    assert removed == [old]
    assert not old.exists() and young.exists() and keep.exists()


def test_an_edit_keeps_owner_group_mode_and_attributes_and_every_hard_link(
    tmp_path: Path,
) -> None:
    target = tmp_path / "a.py"
    target.write_text("x = 1\n")
    os.chmod(target, 0o640)
    os.chown(target, 1234, 2345)  # the suite runs as root in CI; someone else's file
    os.setxattr(target, "user.mm.origin", b"kept")
    edit = {"path": "a.py", "edits": [{"old": "x = 1", "new": "x = 2"}]}
    result = EditFileTool().run(edit, ToolContext(cwd=tmp_path))
    assert result.status is ToolStatus.DONE
    info = target.stat()
    assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (1234, 2345, 0o640)
    assert os.getxattr(target, "user.mm.origin") == b"kept"

    other = tmp_path / "other-name.py"
    os.link(target, other)
    edit = {"path": "a.py", "edits": [{"old": "x = 2", "new": "x = 3"}]}
    result = EditFileTool().run(edit, ToolContext(cwd=tmp_path))
    assert other.read_text() == "x = 3\n" == target.read_text()  # both names changed
    assert "has 1 other hard link(s): it was written in place" in result.output
