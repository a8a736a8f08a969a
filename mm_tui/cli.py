"""The `mm-tui` command: parse flags, load the configuration, start the window or headless mode.

Every failure a person can cause (a bad config, a dead server, a corrupt session) ends in one
line on stderr and a non-zero status, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mm_tui import __version__
from mm_tui.support.debug_log import debug_requested, enable_debug_log

log = logging.getLogger(__name__)

EXIT_CONFIG_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mm-tui",
        description=(
            "A full-screen terminal coding agent for small local models behind an "
            "OpenAI-compatible API (Ollama, llama-server, LM Studio, vLLM)."
        ),
    )
    parser.add_argument("--config", type=Path, metavar="PATH", help="the YAML configuration file")
    parser.add_argument("--model", help="the model to use (default: the first the server lists)")
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the OpenAI-compatible endpoint, e.g. http://localhost:11434/v1",
    )
    parser.add_argument(
        "--yolo", action="store_true", default=None, help="never ask before running or editing"
    )
    parser.add_argument(
        "-p", "--print", metavar="PROMPT", dest="prompt", help="run one turn headless and print it"
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="resume this directory's last session",
    )
    group.add_argument("--resume", metavar="ID", help="resume the session with this id (or file)")
    group.add_argument(
        "--replay", type=Path, metavar="FILE", help="play a saved session back, no model"
    )
    group.add_argument(
        "--demo", action="store_true", help="play the bundled demo session, no model"
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="write a debug log under $XDG_STATE_HOME/mm (also MM_DEBUG=1)",
    )
    parser.add_argument("--version", action="version", version=f"mm-tui {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run mm-tui; a bug still ends in one line (the debug log keeps the traceback)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["trust"]:  # `mm-tui trust [DIR]`: obey this project's config (issue 11)
        from mm_tui.agent.trust import main as trust

        return trust(argv[1:])
    if argv[:1] == ["doctor"]:  # until the CLI has subcommands (h7): `mm-tui doctor …`
        from mm_tui.doctor import main as doctor

        return doctor(argv[1:])
    args = build_parser().parse_args(argv)
    log_path: Path | None = None
    if debug_requested(args.debug):
        try:
            log_path = enable_debug_log()
        except OSError as exc:
            print(f"mm-tui: cannot write the debug log: {exc}", file=sys.stderr)
        else:
            print(f"mm-tui: debug log: {log_path}", file=sys.stderr)
    try:
        return _run(args)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:
        log.exception("internal error")
        where = f" (traceback in {log_path})" if log_path else " (run with --debug for details)"
        print(f"mm-tui: internal error: {type(exc).__name__}: {exc}{where}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    from mm_tui.agent.config import ConfigError, load_config

    cwd = Path.cwd()
    try:
        config = load_config(
            args.config,
            cwd=cwd,
            overrides={"model": args.model, "base_url": args.base_url, "yolo": args.yolo},
        )
    except ConfigError as exc:
        for line in str(exc).splitlines():  # every problem of the file, one line each
            print(f"mm-tui: {line}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.resume is not None and (problem := _unresumable(args.resume)):
        print(f"mm-tui: cannot resume: {problem}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.prompt is not None:
        from mm_tui.headless import run_headless

        return run_headless(
            config, cwd, args.prompt, resume=args.resume, continue_last=args.continue_last
        )
    from mm_tui.app import run_app

    return run_app(
        config,
        cwd,
        resume=args.resume,
        continue_last=args.continue_last,
        replay=args.replay,
        demo=args.demo,
    )


def _unresumable(resume: str) -> str | None:
    """Why `--resume ID` names no session (an unknown id stops, issue 14), or None.

    A session file that exists but is corrupt is kept and a new session starts (SPEC §8 tests).
    """
    from mm_tui.agent.session import SessionStore

    path = SessionStore().locate(resume)  # a log, a version-1 file, or a path
    if path.exists():
        return None
    return f"no session file {path}"


if __name__ == "__main__":
    sys.exit(main())
