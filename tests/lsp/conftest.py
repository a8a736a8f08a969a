"""Real language servers on small fixture projects.

Both Python servers the test extra installs are used: pylsp (jedi + pyflakes, counts columns
in code points, pushes diagnostics) and basedpyright (UTF-16 columns, pull diagnostics), so
every action is proven against two quite different servers. A module shares one started
server per kind for the tests that only read; tests that write get their own copy.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.lsp.answers import Answer, Interrupted
from mm_tui.lsp.defaults import BASEDPYRIGHT, PYLSP
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace

FIXTURES = Path(__file__).parent / "fixtures"
SERVERS = {"pylsp": PYLSP, "basedpyright": BASEDPYRIGHT}

# The servers are console scripts beside this interpreter: found even without an activated venv.
_SCRIPTS = str(Path(sys.executable).parent)
if _SCRIPTS not in os.environ.get("PATH", "").split(os.pathsep):
    os.environ["PATH"] = os.pathsep.join([_SCRIPTS, os.environ.get("PATH", "")])


def text_of(answer: Answer) -> str:
    """The line(s) an answer or a failure says; an interruption is never expected here."""
    assert not isinstance(answer, Interrupted)
    return answer.text


def rewrite_in_place_keeping_size_and_time(path: Path, text: str) -> None:
    """What an editor that keeps timestamps could leave: same inode, size and mtime."""
    before = os.stat(path)
    data = text.encode()
    assert len(data) <= before.st_size
    with open(path, "r+b") as file:  # in place: the inode stays
        file.write(data + b"#" * (before.st_size - len(data) - 1) + b"\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (
        before.st_ino,
        before.st_size,
        before.st_mtime_ns,
    )


def copy_project(destination: Path, name: str = "pyproj") -> Path:
    """A fresh copy of a fixture project (servers and renames may write into it)."""
    target = destination / name
    shutil.copytree(FIXTURES / name, target)
    return target


@pytest.fixture(params=sorted(SERVERS), scope="module")
def server_spec(request: pytest.FixtureRequest) -> LspServerSpec:
    return SERVERS[request.param]


@pytest.fixture(scope="module")
def shared_project(tmp_path_factory: pytest.TempPathFactory, server_spec: LspServerSpec) -> Path:
    return copy_project(tmp_path_factory.mktemp(server_spec.name))


@pytest.fixture(scope="module")
def shared_workspace(shared_project: Path, server_spec: LspServerSpec) -> Iterator[LspWorkspace]:
    """One started server per kind, for the tests of a module that do not write files."""
    workspace = LspWorkspace([server_spec], shared_project)
    yield workspace
    workspace.close()


@pytest.fixture
def own_workspace(tmp_path: Path, server_spec: LspServerSpec) -> Iterator[LspWorkspace]:
    """A server on a private copy of the project, for tests that write or kill."""
    workspace = LspWorkspace([server_spec], copy_project(tmp_path))
    yield workspace
    workspace.close()
