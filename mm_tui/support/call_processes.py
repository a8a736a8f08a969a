"""Finding and ending every process a command started, detached ones included.

A process group is not enough: `setsid`, `nohup … &` with `setsid`, or a double fork leave
the group, and a process whose parent died is re-parented away from us. So each command
carries a mark in its environment, `MM_TUI_CALL=<our pid>:<n>`, which every descendant
inherits through fork and exec (a daemon rarely clears its whole environment); ending a call
ends its group and every process whose `/proc/<pid>/environ` holds the mark, and their
descendants by parent link. No cgroup is needed (none is writable for an ordinary user), and
the scan costs one pass over /proc, only when a call is ended.

mm-tui also becomes a child subreaper on Linux (`prctl(PR_SET_CHILD_SUBREAPER)`): orphans of
its commands are re-parented to it, not to init, so they stay in its tree; the ones it ends are
reaped here. When mm-tui exits (atexit), every process marked with its pid is ended.

A per-command process limit guards against fork bombs: `RLIMIT_NPROC` counts the user's
processes, so the child's limit is the user's current count plus the allowance. The kernel
does not apply it to root (uid 0, CAP_SYS_RESOURCE).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import itertools
import logging
import os
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)

MARK_NAME = "MM_TUI_CALL"
PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")
_numbers = itertools.count(1)
_setup_lock = threading.Lock()
_set_up = False


def new_mark() -> str:
    """A mark unique to this mm-tui and this call: `<pid>:<n>`."""
    return f"{os.getpid()}:{next(_numbers)}"


def set_up_once() -> None:
    """Become a child subreaper (Linux) and end our marked processes at exit; idempotent."""
    global _set_up
    with _setup_lock:
        if _set_up:
            return
        _set_up = True
        if sys.platform.startswith("linux"):
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
                    log.debug("prctl(PR_SET_CHILD_SUBREAPER) failed: %d", ctypes.get_errno())
            except (OSError, AttributeError):
                log.debug("no prctl: orphans go to init", exc_info=True)
        atexit.register(end_marked, f"{os.getpid()}:")


def _pids() -> list[int]:
    try:
        return [int(entry) for entry in os.listdir(_PROC) if entry.isdigit()]
    except OSError:
        return []


def _mark_of(pid: int) -> str | None:
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:  # gone, or another user's process
        return None
    prefix = MARK_NAME.encode() + b"="
    for entry in environ.split(b"\0"):
        if entry.startswith(prefix):
            return entry[len(prefix) :].decode(errors="replace")
    return None


def _parents() -> dict[int, int]:
    parents: dict[int, int] = {}
    for pid in _pids():
        try:
            stat = (_PROC / str(pid) / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[0] != "Z":
            parents[pid] = int(fields[1])
    return parents


def marked_processes(mark: str) -> set[int]:
    """Live processes whose mark is `mark` (or starts with it, for `<pid>:`), with their
    descendants by parent link (a child that cleared its environment is still found)."""
    parents = _parents()
    me = os.getpid()
    whole = not mark.endswith(":")
    found: set[int] = set()
    for pid in parents:
        carried = _mark_of(pid) if pid != me else None
        if carried is not None and (carried == mark if whole else carried.startswith(mark)):
            found.add(pid)
    grew = True
    while grew:
        more = {pid for pid, parent in parents.items() if parent in found and pid not in found}
        found |= more
        grew = bool(more)
    return found


def end_marked(mark: str, grace: float = 0.2) -> int:
    """SIGTERM, `grace`, SIGKILL to every process of `mark` (repeated while new ones appear,
    a fork bomb included); adopted orphans reaped. Returns how many were signalled."""
    ended: set[int] = set()
    for sent in (signal.SIGTERM, signal.SIGKILL, signal.SIGKILL, signal.SIGKILL):
        targets = marked_processes(mark)
        if not targets:
            break
        ended |= targets
        _signal_all(targets, sent)
        if sent == signal.SIGTERM:
            _wait_gone(targets, grace)
    _reap(ended)
    return len(ended)


def _signal_all(pids: Iterable[int], sent: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sent)


def _wait_gone(pids: set[int], grace: float) -> None:
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    try:
        stat = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2 :][:1] != "Z"


#: How long the processes just killed get to die before they are reaped: SIGKILL takes a few
#: milliseconds, but a reap that looks at once finds them still alive and leaves zombies.
REAP_WITHIN = 1.0


def _reap(pids: Iterable[int], within: float = REAP_WITHIN) -> None:
    """Collect the exit of the processes we ended that are our children (the command itself,
    orphans re-parented to us as subreaper); never touches a child someone else waits for,
    since only ended marked pids are passed. Each is waited for until it has died, at most
    `within` seconds in all: a zombie per timed-out command added up over a long session."""
    waiting = set(pids)
    deadline = time.monotonic() + within
    while waiting:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except (ChildProcessError, OSError):  # not ours, or already collected
                done = pid
            if done:
                waiting.discard(pid)
        if not waiting or time.monotonic() >= deadline:
            return
        time.sleep(0.005)


def user_process_count() -> int:
    """How many processes the real user has now (RLIMIT_NPROC counts these)."""
    uid = os.getuid()
    count = 0
    for pid in _pids():
        with contextlib.suppress(OSError):
            if (_PROC / str(pid)).stat().st_uid == uid:
                count += 1
    return count


def process_limit(allowance: int) -> Callable[[], None] | None:
    """A preexec function capping the command at `allowance` processes more than the user
    has now; None when there is no /proc to count with."""
    if allowance <= 0 or not _PROC.is_dir():
        return None
    limit = user_process_count() + allowance

    def apply() -> None:  # runs in the child between fork and exec: no allocation-heavy work
        _, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, soft))

    return apply
