"""What the parts of a running turn share: the sink, the cancel flag and the spinner.

The model call, the tool runner and compaction each post events and must notice an interrupt;
they hold this one object rather than the Agent, so none of them reaches into another.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from mm_tui.agent.events import EventSink, SpinnerChanged


class CancelFlag(threading.Event):
    """A turn's cancel flag: an Event that, once set, also sets the events registered with
    `also_sets`. A thread waiting for something else (a stream's end) waits on one event and
    still wakes at an interrupt at once, without waking to poll the flag."""

    def __init__(self) -> None:
        super().__init__()
        self._guard = threading.Lock()
        self._also: list[threading.Event] = []

    def set(self) -> None:
        super().set()
        with self._guard:
            also = list(self._also)
        for event in also:
            event.set()

    @contextmanager
    def also_sets(self, event: threading.Event) -> Iterator[None]:
        """While inside, setting this flag sets `event` too (at once if already set)."""
        with self._guard:
            self._also.append(event)
        if self.is_set():
            event.set()
        try:
            yield
        finally:
            with self._guard:
                self._also.remove(event)


class TurnSignals:
    """The sink, the current turn's cancel flag (a fresh one per turn) and the spinner state."""

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink
        self.cancel: threading.Event = CancelFlag()
        self._spinner = ""

    def begin(self) -> threading.Event:
        """A new turn (or compaction): a fresh, unset cancel flag."""
        self.cancel = CancelFlag()
        return self.cancel

    def set_spinner(self, state: str) -> None:
        """Post `SpinnerChanged` when the state text changes (SPEC §3)."""
        if state != self._spinner:
            self._spinner = state
            self.sink(SpinnerChanged(state))
