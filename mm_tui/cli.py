"""The `mm-tui` command: parse flags, load the configuration, start a face.

`mm-tui` opens the window, `mm-tui -p PROMPT` runs one headless turn, and `mm-tui <command>`
runs one of SUBCOMMANDS (`acp`, `serve`, …). Every failure a person can cause (a bad config, a
dead server, a corrupt session) ends in one line on stderr and a non-zero status, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from mm_tui import __version__
from mm_tui.faces.exit_codes import EXIT_CONFIG_ERROR
from mm_tui.support.debug_log import debug_requested, enable_debug_log
from mm_tui.support.typeahead import keys_kept

if TYPE_CHECKING:
    from mm_tui.agent.config import Config

log = logging.getLogger(__name__)

#: `mm-tui <name> …`: the module that implements it, and its line in --help. Each module has
#: `add_arguments(parser)` and `run(args, load_config) -> int`, and imports its heavy
#: libraries inside `run`. Adding a subcommand is one line here and its module.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "acp": ("mm_tui.acp.command", "run as an ACP agent on stdin/stdout, for editors (Zed, Toad)"),
    "serve": ("mm_tui.serve", "serve the window to a browser on 127.0.0.1, for demos"),
    "doctor": (
        "mm_tui.doctor",
        "check the server, model, context, tools, language servers, config",
    ),
    "trust": ("mm_tui.trust_command", "obey this project's .mm.yaml as it is now"),
}

EXIT_STATUS_HELP = """\
exit status of -p: 0 answered (or interrupted with Ctrl+C), 1 the turn ended in an error,
2 bad configuration or flags, 3 maxTurns model calls spent, 4 stopped by the loop detector."""

ConfigLoader = Callable[[Path], "Config"]


class SubcommandModule(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def run(self, args: argparse.Namespace, load_config: ConfigLoader) -> int: ...


def _subcommand(name: str) -> SubcommandModule:
    module = importlib.import_module(SUBCOMMANDS[name][0])
    return cast(SubcommandModule, cast(object, module))


def _add_model_flags(parser: argparse.ArgumentParser, *, inherited: bool = False) -> None:
    """Flags every face understands. In a subcommand they default to "not given", so
    `mm-tui --model m acp` and `mm-tui acp --model m` mean the same."""
    unset: dict[str, Any] = {"default": argparse.SUPPRESS} if inherited else {}
    parser.add_argument(
        "--config", type=Path, metavar="PATH", help="the YAML configuration file", **unset
    )
    parser.add_argument(
        "--model", help="the model to use (default: the first the server lists)", **unset
    )
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="the OpenAI-compatible endpoint, e.g. http://localhost:11434/v1",
        **unset,
    )
    parser.add_argument(
        "--yolo",
        action="store_true",
        help="never ask before running or editing",
        **(unset or {"default": None}),
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="write a debug log under $XDG_STATE_HOME/mm (also MM_DEBUG=1)",
        **unset,
    )


def build_parser() -> argparse.ArgumentParser:
    from mm_tui.headless import OUTPUT_FORMATS

    parser = argparse.ArgumentParser(
        prog="mm-tui",
        description=(
            "A full-screen terminal coding agent for small local models behind an "
            "OpenAI-compatible API (Ollama, llama-server, LM Studio, vLLM)."
        ),
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_model_flags(parser)
    parser.add_argument(
        "-p",
        "--print",
        metavar="PROMPT",
        dest="prompt",
        help=(
            "run one turn headless and print it; text piped in comes before PROMPT, "
            "and PROMPT '-' reads the whole prompt from standard input"
        ),
    )
    parser.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        help=(
            "with -p: text (default: the seed's display on a terminal, one row per call when "
            "piped), seed, rows, json (one object at the end), stream-json (one event a line)"
        ),
    )
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--continue",
        dest="continue_last",
        action="store_true",
        help="resume this directory's last session",
    )
    group.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="resume the session with this id (or file); alone, pick one of this directory's",
    )
    group.add_argument(
        "--replay", type=Path, metavar="FILE", help="play a saved session back, no model"
    )
    group.add_argument(
        "--demo", action="store_true", help="play the bundled demo session, no model"
    )
    parser.add_argument("--version", action="version", version=f"mm-tui {__version__}")
    parser.set_defaults(command=None)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for name, (_, help_text) in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        _add_model_flags(sub, inherited=True)
        _subcommand(name).add_arguments(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run mm-tui; a bug still ends in one line (the debug log keeps the traceback).

    Run as a program (`argv` None), the process is first hardened: the API key and the
    terminal out of reach of the commands it will run (`support.process_hardening`)."""
    if argv is None:
        from mm_tui.support.process_hardening import harden_process

        harden_process()
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl+C while it starts: the terminal still interrupts
        return 130


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.output_format is not None and args.prompt is None:
        parser.error("--output-format goes with -p/--print")
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
    except Exception as exc:
        log.exception("internal error")
        where = f" (traceback in {log_path})" if log_path else " (run with --debug for details)"
        print(f"mm-tui: internal error: {type(exc).__name__}: {exc}{where}", file=sys.stderr)
        return 1


def config_loader(args: argparse.Namespace) -> ConfigLoader:
    """Load the configuration seen from a directory, with this command line's overrides."""

    def load(cwd: Path) -> Config:
        from mm_tui.agent.config import load_config

        overrides = {"model": args.model, "base_url": args.base_url, "yolo": args.yolo}
        return load_config(args.config, cwd=cwd, overrides=overrides)

    return load


def _run(args: argparse.Namespace) -> int:
    if args.command is None and args.prompt is None:  # the window: keys typed meanwhile wait
        with keys_kept(sys.stdin, sys.stderr) as typed:  # Textual draws on stderr
            return _run_face(args, typed)
    return _run_face(args)


def _run_face(args: argparse.Namespace, typed: str = "") -> int:
    """`typed`: keys typed before the window could read them, for it to read first."""
    from mm_tui.agent.config import ConfigError

    load = config_loader(args)
    if args.command is not None:
        return _subcommand(args.command).run(args, load)
    cwd = Path.cwd()
    try:
        config = load(cwd)
    except ConfigError as exc:
        for line in str(exc).splitlines():  # every problem of the file, one line each
            print(f"mm-tui: {line}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.resume == "" and args.prompt is not None:
        print(
            "mm-tui: --resume needs a session id with -p (the picker is the window's)",
            file=sys.stderr,
        )
        return EXIT_CONFIG_ERROR
    if args.resume and (problem := _unresumable(args.resume)):
        print(f"mm-tui: cannot resume: {problem}", file=sys.stderr)
        return EXIT_CONFIG_ERROR
    if args.prompt is not None:
        from mm_tui.headless import run_headless
        from mm_tui.support.piped_input import PipedInputError, prompt_with_stdin

        try:
            piped = prompt_with_stdin(args.prompt, getattr(sys.stdin, "buffer", None), sys.stderr)
        except PipedInputError as exc:
            print(f"mm-tui: {exc}", file=sys.stderr)
            return EXIT_CONFIG_ERROR
        if piped.undecodable:
            print(
                f"mm-tui: standard input is not all UTF-8: {piped.undecodable} place(s) "
                "sent as \ufffd",
                file=sys.stderr,
            )
        return run_headless(
            config,
            cwd,
            piped.text,
            resume=args.resume,
            continue_last=args.continue_last,
            output_format=args.output_format or "text",
        )
    from mm_tui.launch import run_app

    return run_app(
        config,
        cwd,
        resume=args.resume,
        continue_last=args.continue_last,
        replay=args.replay,
        demo=args.demo,
        reload=lambda: load(cwd),
        typed=typed,
    )


def _unresumable(resume: str) -> str | None:
    """Why `--resume ID` names no session (an unknown id stops), or None.

    A session file that exists but is corrupt is kept and a new session starts
    (tests/agent/test_sessions.py).
    """
    from mm_tui.agent.session import SessionStore

    path = SessionStore().locate(resume)  # a log, a version-1 file, or a path
    if path.exists():
        return None
    return f"no session file {path}"


if __name__ == "__main__":
    sys.exit(main())
