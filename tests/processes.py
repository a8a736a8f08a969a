"""The machine's processes as a test sees them, read from /proc: which are zombies of this
process, which live in a process group. One reader, so every test parses `stat` the same way
(the command name may hold spaces and parentheses: fields start after the last `)`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple


class ProcessStat(NamedTuple):
    pid: int
    state: str  # "R", "S", "Z", ...
    parent: int
    group: int


def stat_of(pid: int) -> ProcessStat | None:
    """One process's state, parent and group; None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, parent, group = stat[stat.rindex(")") + 2 :].split()[:3]
    return ProcessStat(pid, state, int(parent), int(group))


def processes() -> Iterator[ProcessStat]:
    """Every process alive (or a zombie) now; those that end while read are left out."""
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := stat_of(int(entry))) is not None:
            yield found


def our_zombies() -> set[int]:
    """The dead children of this process that nobody collected yet."""
    me = os.getpid()
    return {p.pid for p in processes() if p.state == "Z" and p.parent == me}


def process_group_members(group: int) -> list[int]:
    """Every live process of a process group (zombies excluded)."""
    return [p.pid for p in processes() if p.group == group and p.state != "Z"]
