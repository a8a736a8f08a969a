"""Keeping the person's terminal out of reach of a command that opens it by name.

A command runs with no controlling terminal and no descriptor of one (its own session, stdin
from /dev/null, output to a pipe), and mm-tui is non-dumpable, so `/proc/$PPID/fd/1` is
refused (`process_hardening`). But the terminal is also a file: `/proc/$PPID/stat` names its
device (`tty_nr`), `/dev/pts/N` is owned by the person, and a command of theirs could open it
and set the pane title, the clipboard (OSC 52), `stty` state, or draw fake text over the window.

So, on Linux with Landlock (ABI 2 or later, Linux 5.19+), the command's child is confined
between fork and exec: it may not open for reading or writing any file under `/dev/pts`,
`/dev/tty`, `/dev/console`, the virtual consoles (`/dev/ttyN`, `/dev/vcs*`), nor whatever
device mm-tui's own standard streams are. Landlock only allows, so the ruleset grants reading,
writing and moving files (`REFER`: without it a rename across directories fails with EXDEV)
beneath every other entry of `/` and of `/dev`, symbolic links left out (`/dev/stdin` points
at mm-tui's own terminal). Everything else (exec, listing, creating, deleting) is not handled,
so it is never refused. The ruleset is built for each command (about 2 ms) and applied with
`landlock_restrict_self` through `landlockpy`; descriptors already open are not affected.

Costs, recorded in docs/decisions (terminal out of reach): the command runs with
`no_new_privs` (the kernel requires it), so set-uid programs (`sudo`) gain nothing; a command
cannot open a pseudo-terminal of its own (`script`, `expect`, a tmux server), since the new
`/dev/pts/M` is refused like the person's. Where Landlock is missing, disabled or only ABI 1
(where every rename across directories would fail), commands run as before, and the debug log
says so once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from landlockpy import Ruleset

log = logging.getLogger(__name__)

#: Entries of /dev that are terminals of the person: pseudo-terminals, the controlling-terminal
#: alias, the console and virtual consoles with their screen memory. Serial ports (`ttyS0`,
#: `ttyUSB0`, `ttyACM0`) stay open to commands (flashing a board) unless mm-tui runs on one.
_TERMINAL_NAMES = re.compile(r"pts|tty|tty\d+|console|vcs\w*")
MINIMUM_ABI = 2  # ABI 1 refuses every rename across directories: git, builds, `mv` would fail
_told_unavailable = False


def fenced_popen(
    argv: list[str],
    *,
    preexec_fn: Callable[[], None] | None = None,
    fence: bool = True,
    **kwargs: Any,
) -> subprocess.Popen[bytes]:
    """`subprocess.Popen(argv, **kwargs)` with the terminals out of reach of the child
    (after `preexec_fn`, when given), where the kernel can do it; `fence=False` (the person's
    `fenceTerminals: false`) starts it as it is."""
    ruleset = _terminal_ruleset() if fence else None
    try:
        process = subprocess.Popen(argv, preexec_fn=_child_setup(preexec_fn, ruleset), **kwargs)
        return cast("subprocess.Popen[bytes]", process)  # bytes: no `text` among the kwargs
    finally:
        if ruleset is not None:
            ruleset.close()


def _child_setup(
    first: Callable[[], None] | None, ruleset: Ruleset | None
) -> Callable[[], None] | None:
    if ruleset is None:
        return first

    def setup() -> None:  # in the child, between fork and exec
        if first is not None:
            first()
        # A failure here (a seccomp filter refusing prctl, 16 nested rulesets) leaves the
        # command as it was before this fence rather than not running it; nothing can be
        # logged from here without risking a lock another thread held at fork.
        with contextlib.suppress(OSError):
            ruleset.restrict()

    return setup


def _terminal_ruleset() -> Ruleset | None:
    """The ruleset allowing every file but the terminals; None where Landlock cannot help."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import landlockpy
        from landlockpy import AccessFS, Ruleset

        abi = landlockpy.abi_version()
        if abi < MINIMUM_ABI:
            _say_unavailable(f"Landlock ABI {abi}")
            return None
        handled = AccessFS.READ_FILE | AccessFS.WRITE_FILE | AccessFS.REFER
        ruleset = Ruleset(handled_fs=handled)
    except (ImportError, OSError):
        _say_unavailable("no Landlock", exc_info=True)
        return None
    try:
        files = AccessFS.READ_FILE | AccessFS.WRITE_FILE
        for path, is_directory in allowed_paths():
            try:
                ruleset.allow_path(path, handled if is_directory else files)
            except OSError:  # gone since it was listed, or a file system Landlock refuses
                log.debug("no Landlock rule for %s", path, exc_info=True)
    except OSError:
        log.debug("cannot build the terminal fence: the command runs without", exc_info=True)
        ruleset.close()
        return None
    return ruleset


def allowed_paths() -> list[tuple[str, bool]]:
    """Every entry of `/` but `/dev`, every entry of `/dev` but the terminals, as
    `(path, is_directory)`; symbolic links left out (they lead back into these, or to a
    terminal: `/dev/stdin`)."""
    refused = _terminal_names()
    found: list[tuple[str, bool]] = []
    for parent in ("/", "/dev"):
        for name in sorted(os.listdir(parent)):
            path = os.path.join(parent, name)
            if path == "/dev" or (parent == "/dev" and name in refused):
                continue
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISLNK(mode):
                found.append((path, stat.S_ISDIR(mode)))
    return found


def _terminal_names() -> set[str]:
    """Names in /dev to refuse: the terminal ones, and whatever mm-tui itself runs on."""
    names = {name for name in os.listdir("/dev") if _TERMINAL_NAMES.fullmatch(name)}
    for descriptor in (0, 1, 2):
        with contextlib.suppress(OSError):
            path = os.path.realpath(os.ttyname(descriptor))
            if path.startswith("/dev/"):
                names.add(path.removeprefix("/dev/").split("/")[0])
    return names


def _say_unavailable(why: str, exc_info: bool = False) -> None:
    global _told_unavailable
    if not _told_unavailable:
        _told_unavailable = True
        log.debug("%s: commands can open the terminal by name (/dev/pts/N)", why,
                  exc_info=exc_info)  # fmt: skip
