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
import threading
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
    """SIGTERM to the process's group, `grace` seconds, SIGKILL to whatever is left; reaped,
    the members re-parented to us included (mm-tui is their subreaper once their shell died)."""
    for sent in (signal.SIGTERM, signal.SIGKILL):
        signal_group(process.pid, sent)
        if sent == signal.SIGTERM:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=grace)
    process.wait()
    wait_group_gone(process.pid, grace)
    reap_group_zombies(process.pid)


#: The groups of commands that ended with processes left running in the background: their
#: members, adopted by mm-tui when they die, are reaped at the next command.
_background_groups: set[int] = set()
_groups_lock = threading.Lock()


def reap_group_zombies(*groups: int) -> int:
    """Collect the dead members of these groups that are our children: a command's
    grandchildren adopted when their shell died first, its background jobs once they end.
    Only these groups' zombies: a child another part of mm-tui waits for (a language server,
    another command) is never in them. Returns how many were collected."""
    if not _PROC.is_dir() or not groups:
        return 0
    me, wanted, reaped = str(os.getpid()), {str(g) for g in groups}, 0
    for entry in os.listdir(_PROC):
        if not entry.isdigit():
            continue
        try:
            stat = (_PROC / entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()  # state, ppid, pgrp, …
        if len(fields) > 2 and fields[0] == "Z" and fields[1] == me and fields[2] in wanted:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(int(entry), os.WNOHANG)
                reaped += 1
    return reaped


def keep_reaping(group: int) -> None:
    """A command ended with members of its group still running: reap them later."""
    with _groups_lock:
        _background_groups.add(group)


def reap_background_groups() -> int:
    """Reap what ended of earlier commands' background jobs; forget the groups now empty."""
    with _groups_lock:
        groups = set(_background_groups)
    reaped = reap_group_zombies(*groups)
    with _groups_lock:
        _background_groups.difference_update(g for g in groups if not group_alive(g))
    return reaped
