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
    """No flags of its own: --config, --model, --base-url and --yolo apply to every session."""


def run(args: argparse.Namespace, load_config: Callable[[Path], Config]) -> int:
    from mm_tui.acp.server import serve_stdio

    return asyncio.run(serve_stdio(load_config))
