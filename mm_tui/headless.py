"""Headless mode (`mm-tui -p "…"`): one turn with the same core, printed by one of the faces.

`--output-format` picks the sink: `text` (the default) is the seed's terminal display on a
terminal and the compact rows when stdout is piped; `seed` and `rows` force one of them;
`json` and `stream-json` are for programs. Tools that need permission are rejected with the
standard text unless --yolo (or `permissions: allow`): nobody is there to press a key.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, TextIO, get_args

from mm_tui.agent.config import Config
from mm_tui.agent.events import Event, Notice, PermissionAnswer, PermissionRequest, TurnEnded
from mm_tui.faces.exit_codes import EXIT_ABORTED, exit_status

if TYPE_CHECKING:
    from mm_tui.agent.agent import Agent

OutputFormat = Literal["text", "seed", "rows", "json", "stream-json"]
OUTPUT_FORMATS: tuple[str, ...] = get_args(OutputFormat)


#: Told once per tool whose question nobody could answer, so the person knows what lets it run.
NOBODY_TO_ASK = (
    "{tool} needs permission and nobody can answer in -p, so it was rejected: run with --yolo, "
    "set `permissions: allow`, or allow it in ~/.config/mm/config.yaml with a rule such as "
    "`{rule}` under permissions.allow"
)


class HeadlessFace(Protocol):
    """An event sink that may say one more thing once the turn is over."""

    def __call__(self, event: Event) -> None: ...

    def finish(self, ended: TurnEnded, status: int) -> None: ...


class NobodyToAsk:
    """Answers every permission question of `-p` with a rejection (nobody is there to press a
    key) after the face has seen it, and tells the person once per tool what would let it run:
    without that hint a rejected command looks like the model's failure."""

    def __init__(self, face: HeadlessFace) -> None:
        self.face = face
        self._told: set[str] = set()

    def __call__(self, event: Event) -> None:
        self.face(event)
        if not isinstance(event, PermissionRequest):
            return
        if event.name not in self._told:
            self._told.add(event.name)
            self.face(Notice("warning", NOBODY_TO_ASK.format(tool=event.name, rule=_rule(event))))
        if not event.future.done():
            event.future.set_result(PermissionAnswer.REJECT)

    def finish(self, ended: TurnEnded, status: int) -> None:
        self.face.finish(ended, status)


def make_face(
    output_format: OutputFormat, config: Config, out: TextIO, err: TextIO
) -> HeadlessFace:
    """The sink for this output format; `text` looks at whether stdout is a terminal."""
    if output_format in ("json", "stream-json"):
        from mm_tui.faces.json_output import JsonOutput

        return JsonOutput(out, stream=output_format == "stream-json")
    from mm_tui.faces.terminal import TerminalWriter

    writer = TerminalWriter(out, err)
    if output_format == "text":
        output_format = "seed" if _is_terminal(out) else "rows"
    if output_format == "seed":
        from mm_tui.faces.seed_display import SeedDisplay

        return SeedDisplay(writer, config.preview_lines)
    from mm_tui.faces.rows import RowPrinter

    return RowPrinter(writer)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def run_headless(
    config: Config,
    cwd: Path,
    prompt: str,
    *,
    resume: str | None = None,
    continue_last: bool = False,
    output_format: OutputFormat = "text",
) -> int:
    """Run one turn; the exit status says how it ended (mm_tui/faces/exit_codes.py)."""
    from mm_tui.agent.agent import Agent

    face = NobodyToAsk(make_face(output_format, config, sys.stdout, sys.stderr))
    agent = Agent(config, face, cwd, resume=resume, continue_last=continue_last)
    _begin(face.face, agent)
    for notice in agent.startup_notices:
        face(notice)
    result: list[TurnEnded] = []
    done = threading.Event()  # waited on, not join(): a Ctrl+C inside join() breaks its lock

    def turn() -> None:
        try:
            result.append(agent.run_turn(prompt))
        finally:
            done.set()

    threading.Thread(target=turn, name="mm-headless-turn", daemon=True).start()
    try:
        while not done.wait(0.1):
            pass
    except KeyboardInterrupt:  # Ctrl+C interrupts the turn (SPEC §3); the history stays valid
        agent.cancel()
        try:
            done.wait(10)
        except KeyboardInterrupt:
            return EXIT_ABORTED
    finally:
        agent.close()
    ended = result[0] if result else TurnEnded("interrupted")
    _begin(face.face, agent, ended=True)
    status = exit_status(ended)
    face.finish(ended, status)
    return status


def _rule(event: PermissionRequest) -> str:
    """An allow rule that would have let this call run: the exact command for bash (a rule
    without `*` matches that command alone), a path pattern to fill in for the others."""
    command = event.detail.strip()
    if event.name == "bash" and command and "\n" not in command and len(command) <= 60:
        return f"bash({command})"
    return f"{event.name}(…)"


def _begin(face: HeadlessFace, agent: Agent, *, ended: bool = False) -> None:
    """Tell a face that wants them the session's id, model and tools (the JSON faces: a
    script resumes the run with `--resume ID`); at the end again, the model then resolved."""
    begin = getattr(face, "begin", None)
    if begin is None:
        return
    begin(
        session_id=agent.session_id(),
        model=agent.model or None,
        tools=agent.registry.names(),
        cwd=str(agent.cwd),
        ended=ended,
    )
