"""Ending a process's whole group, children included (SPEC §3, §4: none left running).

Commands and language servers start in their own session, so the process group holds
everything they spawned: a pipeline's members, basedpyright's node under its Python launcher.
A group whose only members are zombies (dead, waiting for a parent to reap them) counts as
gone. `end_group_sync` serves the bash tool; `wait_group_gone` the lsp client's stop.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

_PROC = Path("/proc")


def group_alive(group: int) -> bool:
    """Whether any live (non-zombie) process is left in the process group."""
    try:
        os.killpg(group, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not _PROC.is_dir():
        return True  # no /proc to tell zombies apart: assume alive
    return any(entry.isdigit() and _live_member(entry, group) for entry in os.listdir(_PROC))


def _live_member(pid: str, group: int) -> bool:
    try:
        stat = (_PROC / pid / "stat").read_text()
    except OSError:
        return False
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (command) "
    return len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z"


def signal_group(group: int, signal_number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal_number)


def wait_group_gone(group: int, timeout: float) -> bool:
    """Wait (bounded) until the group has no live member; True when it has none."""
    deadline = time.monotonic() + timeout
    while group_alive(group):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.02)
    return True


def end_group_sync(process: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the process's group, `grace` seconds, SIGKILL to whatever is left; reaped."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        signal_group(process.pid, sent)
        if sent == signal.SIGTERM:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace)
    process.wait()
