"""`mm-tui serve`: the window in a browser, for demos, through textual-serve on 127.0.0.1.

Each browser tab that opens the page starts its own `mm-tui` window process (textual-serve
runs the command with Textual's web driver and relays the terminal over a websocket). Only the
loopback interface is served: the window runs commands and edits files, so it is not offered to
the network; and since any web page the person visits could still reach 127.0.0.1, every
request must name this server and carry the token printed at start (`serve_guard`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mm_tui.faces.exit_codes import EXIT_CONFIG_ERROR

if TYPE_CHECKING:
    from mm_tui.agent.config import Config

HOST = "127.0.0.1"
DEFAULT_PORT = 8000
MISSING = "mm-tui serve needs textual-serve: pip install 'mm-tui[serve]'"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port on {HOST} (default {DEFAULT_PORT})"
    )
    unset = argparse.SUPPRESS  # `mm-tui --demo serve` and `mm-tui serve --demo` alike
    parser.add_argument(
        "--demo", action="store_true", default=unset, help="serve the bundled demo, no model"
    )
    parser.add_argument(
        "--replay", type=Path, metavar="FILE", default=unset, help="serve a saved session's replay"
    )


def window_command(args: argparse.Namespace) -> list[str]:
    """The `mm-tui` command each browser tab runs: the window with this command line's flags."""
    argv = [sys.executable, "-m", "mm_tui.cli"]
    for flag, value in (
        ("--config", args.config),
        ("--model", args.model),
        ("--base-url", args.base_url),
        ("--resume", args.resume),
        ("--replay", args.replay),
    ):
        if value is not None:
            argv += [flag, str(value)]
    for flag, on in (
        ("--yolo", args.yolo),
        ("--demo", args.demo),
        ("--continue", args.continue_last),
        ("--debug", args.debug),
    ):
        if on:
            argv.append(flag)
    return argv


def run(args: argparse.Namespace, load_config: Callable[[Path], Config]) -> int:
    """Serve until Ctrl+C (or SIGTERM); a bad config stops it before it serves."""
    from mm_tui.agent.config import ConfigError

    try:
        load_config(Path.cwd())
    except ConfigError as exc:
        print(f"mm-tui: {exc}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    try:
        from mm_tui.serve_guard import GuardedServer
    except ImportError:
        print(MISSING, file=sys.stderr)
        return EXIT_CONFIG_ERROR
    from mm_tui.support.secret_env import restore_hidden

    restore_hidden()  # each tab's window is mm-tui itself: it needs the key it hides again
    command = shlex.join(window_command(args))
    server = GuardedServer(command, host=HOST, port=args.port, title="mm-tui")
    server.serve()
    return 0
