"""Headless mode (`mm-tui -p "…"`): one turn with the same core, printed as plain lines.

Tool rows become one line each (`‣ bash ls  ✓ 0.2s`), the answer streams to stdout, notices go
to stderr. Tools that need permission are rejected with the standard text unless --yolo (or
`permissions: allow`): nobody is there to press a key.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import TextIO

from mm_tui.agent.config import Config
from mm_tui.agent.events import (
    STATUS_GLYPHS,
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    TextDelta,
    ToolFinished,
    ToolStatus,
    TurnEnded,
    TurnSummary,
)
from mm_tui.support.terminal_text import literal_stream


def row_line(event: ToolFinished) -> str:
    """`‣ bash ls  ✓ 0.2s` — with the status word when it is not plain success."""
    word = "" if event.status is ToolStatus.DONE else f" {event.status.value}"
    return f"‣ {event.title}  {STATUS_GLYPHS[event.status]}{word} {event.duration:.1f}s"


class HeadlessPrinter:
    """The headless sink: prints events as they come, rejects permission questions."""

    def __init__(self, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> None:
        # issue 11: nothing a model, a file or a server wrote reaches the terminal raw
        self.out, self.err = literal_stream(out), literal_stream(err)
        self._at_line_start = True

    def _line(self, text: str, stream: TextIO | None = None) -> None:
        if not self._at_line_start:
            self.out.write("\n")
            self._at_line_start = True
        print(text, file=stream or self.out, flush=True)

    def __call__(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.out.write(event.text)
            self.out.flush()
            self._at_line_start = event.text.endswith("\n")
        elif isinstance(event, PermissionRequest):
            event.future.set_result(PermissionAnswer.REJECT)
        elif isinstance(event, ToolFinished):
            self._line(row_line(event))
        elif isinstance(event, Notice):
            self._line(f"[{event.level}] {event.text}", self.err)
        elif isinstance(event, TurnSummary):
            self._line(event.line())


def run_headless(
    config: Config,
    cwd: Path,
    prompt: str,
    *,
    resume: str | None = None,
    continue_last: bool = False,
) -> int:
    """Run one turn; exit status 0, or 1 when the turn ended in an error."""
    from mm_tui.agent.agent import Agent

    printer = HeadlessPrinter()
    agent = Agent(config, printer, cwd, resume=resume, continue_last=continue_last)
    for notice in agent.startup_notices:
        printer(notice)
    result: list[TurnEnded] = []
    done = (
        threading.Event()
    )  # waited on, not join(): a Ctrl+C inside join() breaks the thread's lock

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
            return 130
    finally:
        agent.close()
    ended = result[0] if result else TurnEnded("interrupted")
    return 1 if ended.reason in ("error", "loop") else 0
