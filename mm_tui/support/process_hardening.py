"""Keeping the API key and the person's terminal out of reach of the commands mm-tui runs.

A command the model runs has the person's own user id, so without this the kernel lets it read
`/proc/<mm-tui>/environ` (the environment mm-tui started with: `OPENAI_API_KEY` included, since
a child's scrubbed environment says nothing of its parent's), read `/proc/<mm-tui>/mem`, and
open `/proc/<mm-tui>/fd/1`, the person's terminal (to set the pane title, the clipboard by
OSC 52, or `stty` state). At its start mm-tui therefore, as Codex's `process-hardening` does:

- makes itself non-dumpable (`prctl(PR_SET_DUMPABLE, 0)`): a process of the same user without
  CAP_SYS_PTRACE can then no longer open its `environ`, `mem` or `fd/*`, nor attach a debugger
  (py-spy, gdb), and no core file is written. The flag is reset at `exec`, so the commands and
  language servers mm-tui starts are ordinary processes;
- sets its core size limit to 0 (soft: a command may raise it again);
- takes secret-named variables (`*_API_KEY`, `*_TOKEN`, …, `support.secret_env`) out of its
  environment, kept aside for the config loader, and wipes their bytes from the environment
  block it was started with (the block `/proc/<pid>/environ` shows, which `os.environ` changes
  never reach), so even a reader the kernel still lets in (root) finds no key there.

Commands run in their own session with stdin from /dev/null and no terminal (`tools/bash.py`),
and where Landlock is there they cannot open a terminal by name (`/dev/pts/N`:
`terminal_fence.py`). What this cannot cover, since commands run as the person: files the
person can read (a config file holding `apiKey`), the environment of other processes of theirs
(the shell that exported the key); the README's Safety section says so.
"""

from __future__ import annotations

import ctypes
import logging
import resource
import sys
from pathlib import Path

from mm_tui.support.secret_env import hide_secrets

log = logging.getLogger(__name__)

PR_SET_DUMPABLE = 4
#: `/proc/<pid>/stat` fields 50 and 51 (1-based, since Linux 3.5): where the environment block
#: the process was started with lies in its memory; counted here from field 3 (the state).
_ENV_START_FIELD = 50 - 3
_ENV_END_FIELD = 51 - 3


def harden_process() -> None:
    """Everything above, once, as early as possible; each step that fails is logged only."""
    if not sys.platform.startswith("linux"):
        hide_secrets()
        return
    _not_dumpable()
    _no_core_file()
    wipe_initial_environment(hide_secrets())


def _not_dumpable() -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            log.debug("prctl(PR_SET_DUMPABLE, 0) failed: errno %d", ctypes.get_errno())
    except (OSError, AttributeError):
        log.debug("no prctl: the process stays dumpable", exc_info=True)


def _no_core_file() -> None:
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    except (OSError, ValueError):
        log.debug("cannot lower RLIMIT_CORE", exc_info=True)


def wipe_initial_environment(names: set[str]) -> int:
    """Overwrite with NUL bytes the `NAME=value` entries of `names` in the environment block
    this process started with (nothing points at them once `os.environ` dropped them);
    returns how many entries were wiped."""
    if not names:
        return 0
    try:
        fields = Path("/proc/self/stat").read_text()
        fields = fields[fields.rfind(")") + 2 :].split()
        start, end = int(fields[_ENV_START_FIELD]), int(fields[_ENV_END_FIELD])
        block = ctypes.string_at(start, end - start)
    except (OSError, IndexError, ValueError):
        log.debug("cannot find the initial environment block", exc_info=True)
        return 0
    wiped, offset = 0, 0
    for entry in block.split(b"\0"):
        name = entry.partition(b"=")[0].decode("utf-8", "surrogateescape")
        if entry and name in names:
            ctypes.memset(start + offset, 0, len(entry))
            wiped += 1
        offset += len(entry) + 1
    return wiped
