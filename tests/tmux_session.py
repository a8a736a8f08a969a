"""mm-tui in a real terminal: a private tmux server per test, and a patient wait on its screen.

Used where a Pilot test cannot see the fault: what actually reached the terminal (escapes, a
redraw that never came)."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator

import pytest


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


def wait_until(condition: Callable[[], bool], timeout: float = 60.0) -> bool:
    """Whether `condition` held within `timeout` seconds (a bound for broken tests only)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False
