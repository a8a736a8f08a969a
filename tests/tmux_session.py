"""mm-tui in a real terminal: a private tmux server per test, and a patient wait on its screen.

Used where a Pilot test cannot see the fault: what actually reached the terminal (escapes, a
redraw that never came)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.waiting import wait_until


def tmux_server() -> Iterator[Callable[..., str]]:
    """`run(*args)`: a tmux command on a socket of its own (its stdout); killed afterwards."""
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for this test (.ci/run installs it)")
    socket = f"mm-test-{uuid.uuid4().hex[:12]}"

    def run(*args: str) -> str:
        done = subprocess.run(["tmux", "-L", socket, *args], capture_output=True, check=False)
        return done.stdout.decode("utf-8", "replace")

    yield run
    run("kill-server")


def wait_for_screen(
    screen: Callable[[], str], what: str, shows: Callable[[str], object], timeout: float = 60.0
) -> str:
    """The screen once `shows` accepts it, looked at every 0.2 s; failing after `timeout`
    seconds (a bound for broken tests only), it names `what` and shows the last screen."""
    return wait_until(screen, what, until=shows, timeout=timeout, interval=0.2)


def mm_tui_command(home: Path, base_url: str) -> str:
    """The shell line starting mm-tui (`--yolo`) with `home` as its HOME and XDG dirs, so no
    config, trust or session of the machine's user is read or written."""
    env = {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "TERM": "xterm-256color",
    }
    argv = [sys.executable, "-m", "mm_tui.cli", "--yolo", "--base-url", base_url]
    return " ".join([f"{k}={v}" for k, v in env.items()] + argv)
