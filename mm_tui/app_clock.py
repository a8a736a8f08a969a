"""The window's clock (issue 16): 10 ticks a second while a turn runs, each one frame.

A frame costs the model's machine CPU, so the spinner, the running rows' durations and the
streaming answer move together on the tick, and text deltas held by the `EventBridge` are
taken on it. The interval timer's callback runs beside Textual's message loop, so it only
posts `Ticked`: the tick is then handled in order with the core's events.

A base class of `MMApp` (like `WindowPreferences`), so the app module keeps to drawing events.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from textual import on

from mm_tui.app_preferences import WindowPreferences
from mm_tui.widgets.status_line import StatusLine
from mm_tui.widgets.tool_row import format_duration
from mm_tui.widgets.transcript import Transcript
from mm_tui.window import event_bridge as notes

if TYPE_CHECKING:
    from mm_tui.window.turns import TurnController

TICK_SECONDS = 0.1


class WindowClock(WindowPreferences):
    """Ticks while a turn runs; `frame` numbers the spinner's frames."""

    frame: int = 0

    # Looked up once: a query walks the DOM (every mounted block), and a long replay sends
    # tens of thousands of events, a turn ten ticks a second.
    @cached_property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @cached_property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    def clocked_parts(self) -> tuple[TurnController, notes.EventBridge]:
        """The app's turns (is one running, since when) and its bridge (held deltas)."""
        raise NotImplementedError

    def start_clock(self) -> None:
        """Tick from now on (not in still mode: snapshots have no motion)."""
        self.transcript.clocked = True
        self.set_interval(TICK_SECONDS, self._clock)

    def _clock(self) -> None:
        turns, bridge = self.clocked_parts()
        if turns.running or bridge.pending:
            self.post_message(notes.Ticked())

    async def take_events(self) -> None:
        """Apply what the bridge holds (the app's handler of `EventsArrived`)."""
        raise NotImplementedError

    @on(notes.Ticked)
    async def _tick(self) -> None:
        if not self.status_line.is_attached:  # closing
            return
        turns, bridge = self.clocked_parts()
        if bridge.pending:  # deltas held for this tick
            await self.take_events()
        if not turns.running:
            return
        transcript = self.transcript
        await transcript.tick()
        self.frame += 1
        status_line = self.status_line
        status_line.frame = self.frame
        status_line.elapsed = format_duration(turns.elapsed())
        for row in transcript.running_rows():
            row.tick(self.frame)
