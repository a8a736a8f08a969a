"""What the parts of a running turn share: the sink, the cancel flag and the spinner.

The model call, the tool runner and compaction each post events and must notice an interrupt;
they hold this one object rather than the Agent, so none of them reaches into another.
"""

from __future__ import annotations

import threading

from mm_tui.agent.events import EventSink, SpinnerChanged


class TurnSignals:
    """The sink, the current turn's cancel flag (a fresh one per turn) and the spinner state."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.cancel = threading.Event()
        self._spinner = ""

    def begin(self) -> threading.Event:
        """A new turn (or compaction): a fresh, unset cancel flag."""
        self.cancel = threading.Event()
        return self.cancel

    def set_spinner(self, state: str) -> None:
        """Post `SpinnerChanged` when the state text changes (SPEC §3)."""
        if state != self._spinner:
            self._spinner = state
            self.sink(SpinnerChanged(state))
