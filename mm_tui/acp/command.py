"""`mm-tui acp`: run as an ACP agent on stdin/stdout (the editor starts it and talks JSON-RPC).

The SDK is imported only here, when the subcommand runs; nothing is printed on stdout but the
protocol (notices travel as messages, the debug log as usual with --debug).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mm_tui.agent.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--config, --model, --base-url and --yolo apply to every session; these two keep the
    file tools on the disk and bash in mm-tui's own process when the editor offers its own."""
    parser.add_argument(
        "--no-client-fs",
        action="store_true",
        help="read and write files on disk, not through the editor's buffers (fs/*)",
    )
    parser.add_argument(
        "--no-client-terminal",
        action="store_true",
        help="run commands in mm-tui's own processes, not in the editor's terminals",
    )


def run(args: argparse.Namespace, load_config: Callable[[Path], Config]) -> int:
    from mm_tui.acp.server import serve_stdio

    use_fs = not getattr(args, "no_client_fs", False)
    use_terminal = not getattr(args, "no_client_terminal", False)
    return asyncio.run(serve_stdio(load_config, client_fs=use_fs, client_terminal=use_terminal))
