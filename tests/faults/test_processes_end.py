"""Attacks on "processes end when they should": commands that leave their
process group (`setsid`, a double-forking daemon, `nohup`) are still ended when their call
times out or is interrupted and when `mm-tui -p` exits; a fork bomb is held to the process
limit and ended. Real bash, real processes; the fork bomb runs as an unused user id (RLIMIT_NPROC is
not applied to root) under an outer safety limit, so the machine stays usable whatever
happens."""

from __future__ import annotations

import contextlib
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import PROCESS_LIMIT_LINE, BashTool
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.waiting import holds_within, wait_until

pytestmark = pytest.mark.timeout(120)

#: The nohup sleeper's duration, unique to this test process: `sleepers` scans the whole
#: machine, where another run of this suite (a second CI) may have its own `sleep 301`.
NOHUP = f"301.{os.getpid()}"

DETACH = (
    "setsid sleep 300 & echo $! > setsid.pid; "
    f"nohup setsid sleep {NOHUP} > /dev/null 2>&1 & "
    'python3 -c "import os, time\nif os.fork() == 0:\n os.setsid()\n if os.fork() == 0:\n'
    "  open('daemon.pid', 'w').write(str(os.getpid())); time.sleep(300)\" "
    "> /dev/null 2>&1; "
)


def alive(pid: int) -> bool:
    """Running (a zombie waiting for a reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def pids_of(folder: Path) -> list[int]:
    def written(name: str) -> str:
        """The file's text once its writer has put the pid in (a file is made empty first)."""
        path = folder / name
        return path.read_text().strip() if path.exists() else ""

    for name in ("setsid.pid", "daemon.pid"):
        wait_until(lambda n=name: written(n), f"the pid in {name}", timeout=15, interval=0.02)
    return [int((folder / name).read_text()) for name in ("setsid.pid", "daemon.pid")]


def all_end(pids: list[int]) -> None:
    """Each of `pids` ends; failing, the message lists those that run on."""
    running = lambda: [pid for pid in pids if alive(pid)]  # noqa: E731
    wait_until(
        running, "no detached one runs on", until=lambda on: not on, timeout=5, interval=0.02
    )


def sleepers(tag: str) -> list[int]:
    """Live `sleep <tag>` processes, wherever they were re-parented."""
    wanted = b"sleep\0" + tag.encode() + b"\0"
    found: list[int] = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and Path(f"/proc/{entry}/cmdline").read_bytes() == wanted:
                found.append(int(entry))
    return [pid for pid in found if alive(pid)]


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, 9)


def test_detached_processes_are_ended_when_the_call_times_out(tmp_path: Path) -> None:
    result = BashTool(timeout=2).run(
        {"command": DETACH + "sleep 30"}, ToolContext(cwd=tmp_path, max_output=10_000)
    )
    pids = pids_of(tmp_path)
    try:
        assert result.status is ToolStatus.TIMED_OUT
        all_end(pids)
        assert not sleepers(NOHUP)
    finally:
        kill_all([*pids, *sleepers(NOHUP)])


def test_detached_processes_are_ended_when_the_call_is_interrupted(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, max_output=10_000)

    def interrupt() -> None:
        if holds_within((tmp_path / "daemon.pid").exists, timeout=20, interval=0.02):
            ctx.cancel.set()

    threading.Thread(target=interrupt, daemon=True).start()
    result = BashTool().run({"command": DETACH + "sleep 25"}, ctx)
    pids = pids_of(tmp_path)
    try:
        assert result.status is ToolStatus.INTERRUPTED
        all_end(pids)
        assert not sleepers(NOHUP)
    finally:
        kill_all([*pids, *sleepers(NOHUP)])


def mm(*args: str, cwd: Path, user: str | None = None, nproc: int | None = None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env.update({"HOME": str(cwd), "XDG_DATA_HOME": str(cwd / "data")})
    env.update({"XDG_STATE_HOME": str(cwd / "state"), "XDG_CONFIG_HOME": str(cwd / "config")})
    prefix = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups"] if user else []

    def limit() -> None:
        if nproc is not None:
            resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))

    return subprocess.run(
        [*prefix, sys.executable, "-m", "mm_tui.cli", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=90,
        preexec_fn=limit,
    )


def test_detached_processes_are_ended_when_mm_tui_exits(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    command = DETACH + "echo started"  # the call itself ends well: they outlive it
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": command})]))
    model_server.enqueue(Reply(text="Started them."))
    result = mm("-p", "go", "--yolo", "--base-url", model_server.base_url, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    pids = pids_of(tmp_path)
    try:
        assert "started" in model_server.requests[1]["messages"][-1]["content"]
        all_end(pids)
        assert not sleepers(NOHUP)
    finally:
        kill_all([*pids, *sleepers(NOHUP)])


def unused_uid() -> int:
    """A user id no process has, chosen afresh for each run: two suites running the fork bomb
    at once on one machine (as `nobody` both) would count each other's processes."""
    for _ in range(100):
        uid = random.randrange(200_000, 900_000)
        if processes_of(uid) == 0:
            return uid
    raise AssertionError("no unused user id found")


def processes_of(uid: int) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid:
                count += 1
        except OSError:
            continue
    return count


def live_processes_of(uid: int) -> int:
    """As `processes_of`, zombies left out (a container's init may be slow to reap)."""
    count = 0
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and os.stat(f"/proc/{entry}").st_uid == uid and alive(int(entry)):
                count += 1
        except OSError:
            continue
    return count


@pytest.fixture
def open_folder() -> Iterator[Path]:
    """A folder any user may use (pytest's tmp_path is root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="mm-forkbomb-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_a_fork_bomb_is_held_to_the_process_limit_and_ended(
    open_folder: Path, model_server: ScriptedServer
) -> None:
    bomber = unused_uid()
    (open_folder / ".mm.yaml").write_text("maxProcesses: 50\n")
    bomb = ":(){ :|:& };:"
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": bomb})]))
    model_server.enqueue(Reply(text="Oops."))
    peak = 0
    running = True

    def watch() -> None:
        nonlocal peak
        while running:
            peak = max(peak, processes_of(bomber))
            time.sleep(0.005)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = mm(
            "-p", "bomb", "--yolo", "--base-url", model_server.base_url,
            cwd=open_folder, user=str(bomber), nproc=300,
        )  # fmt: skip
    finally:
        running = False
        watcher.join()
    assert result.returncode == 0, result.stderr
    told = model_server.requests[1]["messages"][-1]["content"]
    assert told.endswith(PROCESS_LIMIT_LINE.format(limit=50)), told[-300:]
    assert peak <= 50 + 5, f"{peak} processes: the limit did not hold"
    wait_until(
        lambda: live_processes_of(bomber),
        "no process of the bomb outlives mm-tui",
        until=lambda live: live == 0,
        timeout=10,
        interval=0.02,
    )
