"""No zombie left by the bash tool: mm-tui is the subreaper of its commands' processes, so
every one that dies under it must be collected, or a long session fills with zombies."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import BashTool
from tests.processes import our_zombies, stat_of
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(60)


def run(command: str, cwd: Path, timeout: float = 30.0):
    return BashTool(timeout=timeout).run({"command": command}, ToolContext(cwd=cwd))


def state_of(pid: int) -> str:
    found = stat_of(pid)
    return "gone" if found is None else found.state


def test_a_timed_out_commands_grandchildren_are_reaped(tmp_path: Path) -> None:
    before = our_zombies()
    pid_file = tmp_path / "pids"
    command = (
        f"(sleep 60) & echo $! >> {pid_file}; (sleep 60; true) & echo $! >> {pid_file}; sleep 30"
    )
    assert run(command, tmp_path, timeout=1).status is ToolStatus.TIMED_OUT
    pids = [int(line) for line in pid_file.read_text().split()]
    assert [state_of(pid) for pid in pids] == ["gone", "gone"]  # not zombies of ours
    assert our_zombies() - before == set()


def test_an_interrupted_commands_processes_are_reaped(tmp_path: Path) -> None:
    before = our_zombies()
    ctx = ToolContext(cwd=tmp_path)
    ctx.emit_output = lambda text: ctx.cancel.set() if "ready" in text else None
    result = BashTool().run({"command": "(sleep 60) & echo ready; wait"}, ctx)
    assert result.status is ToolStatus.INTERRUPTED
    assert our_zombies() - before == set()


def test_a_background_job_that_ended_is_reaped_by_the_next_command(tmp_path: Path) -> None:
    before = our_zombies()
    pid_file = tmp_path / "job.pid"
    started = run(f"sleep 0.3 > /dev/null 2>&1 & echo $! > {pid_file}", tmp_path)
    assert started.status is ToolStatus.DONE
    job = int(pid_file.read_text())
    wait_until(lambda: state_of(job) in ("Z", "gone"), "the job ended", timeout=20, interval=0.02)
    assert run("true", tmp_path).status is ToolStatus.DONE
    assert state_of(job) == "gone"
    assert our_zombies() - before == set()
