"""Running mm-tui as a person or a program does: a real process, piped or under tmux."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment without the person's model settings, with a private home."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_", "NO_COLOR"))}
    env.update({"HOME": str(home), "XDG_DATA_HOME": str(home / "data")})
    env.update(extra)
    return env


def mm(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`mm-tui ARGS` in `cwd`, stdout and stderr piped."""
    return subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", *args],
        cwd=cwd,
        env=env or clean_env(cwd),
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=timeout,
    )


class Tmux:
    """One private tmux server; `run` a command in a real terminal, read what it shows."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def __call__(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=False
        ).stdout

    def start(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        """Run `argv` in a 120x40 terminal; the pane stays after it exits, with its status."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        command = f"env -i {exports} {shlex.join(argv)}; echo EXIT=$?; sleep 600"
        self("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "120", "-y", "40",
             "-c", str(cwd), command)  # fmt: skip
        self("set-option", "-g", "allow-rename", "on")  # an OSC title would reach the pane

    def screen(self, styled: bool = False) -> str:
        return self("capture-pane", "-p", *(["-e"] if styled else []), "-t", "mm")

    def title(self) -> str:
        return self("display-message", "-p", "-t", "mm", "#{pane_title}").strip()


@contextmanager
def tmux_server(name: str) -> Iterator[Tmux]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is needed for this test (.ci/run installs it)")
    tmux = Tmux(f"mm-faces-{name}-{os.getpid()}")
    try:
        yield tmux
    finally:
        tmux("kill-server")
