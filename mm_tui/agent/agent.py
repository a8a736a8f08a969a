"""The Agent: one conversation with the model, turn after turn (SPEC §3).

`run_turn` blocks (call it from a worker thread); `cancel` may be called from any thread.
Events go to the sink; permission questions travel as PermissionRequest events carrying a
Future that the sink resolves.
"""

from __future__ import annotations

from pathlib import Path

from mm_tui.agent.config import Config
from mm_tui.agent.events import EventSink, TurnEnded


class Agent:
    """API contract (implementation in progress)."""

    def __init__(self, config: Config, sink: EventSink, cwd: Path | None = None) -> None:
        self.config = config
        self.sink = sink
        self.cwd = cwd or Path.cwd()

    def run_turn(self, text: str) -> TurnEnded:
        """Run one user turn to its end; blocking."""
        raise NotImplementedError

    def cancel(self) -> None:
        """Interrupt the running turn (thread-safe): close the stream, end a running tool."""
        raise NotImplementedError

    def new_session(self) -> None:
        """`/new`: a fresh history and a reset loop detector."""
        raise NotImplementedError

    def close(self) -> None:
        """Stop language servers and anything still running."""
