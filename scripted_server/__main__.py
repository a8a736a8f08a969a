"""By hand: `python -m scripted_server SCRIPT [--port 8765] [--dialect openai]`.

Prints the base URL on one line, then serves the script until Ctrl+C (or SIGTERM).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from scripted_server.script import DIALECTS, ScriptError, load_script
from scripted_server.server import ScriptedServer


def parse_arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m scripted_server",
        description="Serve scripted replies through an OpenAI-compatible chat API.",
    )
    parser.add_argument("script", help="JSON or YAML file: a list of replies")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: any free)")
    parser.add_argument("--dialect", choices=DIALECTS, default="openai")
    parser.add_argument("--model", action="append", help="a model name for /v1/models")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    arguments = parse_arguments(argv)
    try:
        replies = load_script(arguments.script)
    except (OSError, ScriptError, ValueError) as error:
        print(f"scripted server: {error}", file=sys.stderr)
        return 2
    finished = threading.Event()
    # SIGTERM ends the server as cleanly as Ctrl+C does.
    signal.signal(signal.SIGTERM, lambda *_: finished.set())
    with ScriptedServer(dialect=arguments.dialect, port=arguments.port) as server:
        if arguments.model:
            server.models = list(arguments.model)
        server.extend(replies)
        print(server.base_url, flush=True)
        try:
            while not finished.wait(0.2):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
