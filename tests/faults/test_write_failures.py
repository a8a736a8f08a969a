"""Writes that fail: a read-only file, a folder the user may not write, a full disk.
The original file stays as it was, no temporary is left, and the model is told why."""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext, ToolResult
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.write_file import WriteFileTool

ORIGINAL = "value = 1\n"
CALLS: dict[str, tuple[Any, dict[str, Any]]] = {
    "write_file": (WriteFileTool(), {"path": "data.py", "content": "value = 2\n" * 500}),
    "edit_file": (EditFileTool(), {"path": "data.py", "edits": [{"old": "1", "new": "2" * 5000}]}),
}


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder any user may enter (pytest's own tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="mm-write-failures-"))
    folder.chmod(0o755)
    (folder / "data.py").write_text(ORIGINAL)
    yield folder
    shutil.rmtree(folder)


def in_child(
    action: Callable[[], ToolResult], *, user: int | None = None, max_file: int | None = None
) -> dict:
    """Run `action` in a forked child, as another user or with a file-size limit (a real
    failure: as root, permission bits alone would not stop a write)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.close(read_end)
            if max_file is not None:
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
                resource.setrlimit(resource.RLIMIT_FSIZE, (max_file, max_file))
            if user is not None:
                os.setgid(user)
                os.setuid(user)
            result = action()
            os.write(
                write_end,
                json.dumps({"output": result.output, "status": result.status.value}).encode(),
            )
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def assert_untouched(folder: Path) -> None:
    assert (folder / "data.py").read_text() == ORIGINAL
    assert sorted(p.name for p in folder.iterdir()) == ["data.py"]  # no temporary left


@pytest.mark.parametrize("tool_name", CALLS)
def test_a_read_only_file_is_not_replaced(tool_name: str, shared_folder: Path) -> None:
    tool, args = CALLS[tool_name]
    (shared_folder / "data.py").chmod(0o444)
    result = tool.run(args, ToolContext(cwd=shared_folder))
    assert result.status is ToolStatus.FAILED
    assert result.output == "[error: cannot write data.py: the file is read-only (mode 444)]"
    assert_untouched(shared_folder)


@pytest.mark.parametrize("tool_name", CALLS)
def test_a_folder_the_user_may_not_write_is_said(tool_name: str, shared_folder: Path) -> None:
    tool, args = CALLS[tool_name]
    (shared_folder / "data.py").chmod(0o666)  # the file is writable; its folder is not
    result = in_child(lambda: tool.run(args, ToolContext(cwd=shared_folder)), user=65534)
    assert result["status"] == "failed"
    assert result["output"] == "[error: cannot write data.py: Permission denied]"
    assert_untouched(shared_folder)


@pytest.mark.parametrize("tool_name", CALLS)
def test_a_full_disk_leaves_the_original(tool_name: str, shared_folder: Path) -> None:
    tool, args = CALLS[tool_name]
    result = in_child(lambda: tool.run(args, ToolContext(cwd=shared_folder)), max_file=1024)
    assert result["status"] == "failed"
    assert result["output"] == "[error: cannot write data.py: File too large]"
    assert_untouched(shared_folder)
