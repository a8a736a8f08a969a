"""`mm-tui trust [DIR]` in the CLI's subcommand table; the work is `mm_tui.agent.trust`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mm_tui.agent.config import Config


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "directory", nargs="?", type=Path, metavar="DIR", help="the project (default: here)"
    )


def run(args: argparse.Namespace, load_config: Callable[[Path], Config]) -> int:
    from mm_tui.agent.trust import main

    return main([str(args.directory)] if args.directory is not None else [])
