"""The window's clock: 10 ticks a second while a turn runs, few frames.

A frame costs the model's machine 2 to 5 ms of CPU whatever it shows, so the spinner, the
running rows' durations and the streaming answer move together on the tick, and text deltas
held by the `EventBridge` are taken on it. While the model's text flows (`Writing`,
`Thinking`, text within `FLOW_SECONDS`), and while the window is over its share of the time
(`event_bridge.TakePace`: a flood of quick calls, when its ticks and frames would slow the core
down), nothing animates: the spinner and the prompt's cursor stand still, the answer draws
whole lines only (`LineGate`), the window ticks every `FLOW_TICK_SECONDS` (a second, slower
timer: each tick wakes the window's loop), and the turn's time (whole seconds) is drawn with
the answer's frames, or once a second when there are none. While the window waits (the model,
a tool, a pause in the text) the spinner turns. When no
turn runs and no event waits, the clock sleeps (its timers paused: an idle window wakes for
nothing); a state shown on the status line or an event from the core wakes it.

The interval timer's callback runs beside Textual's message loop, so it only posts `Ticked`:
the app handles the tick (`Clock.tick`) in order with the core's events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.app import App
from textual.timer import Timer

from mm_tui.agent.events import THINKING, WRITING
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.status_line import StatusLine, format_elapsed
from mm_tui.widgets.transcript import Transcript
from mm_tui.window import event_bridge as notes

if TYPE_CHECKING:
    from mm_tui.window.turns import TurnController

TICK_SECONDS = 0.1
#: Spinner states in which the model's text flows onto the screen.
FLOWING_STATES = frozenset({WRITING, THINKING})
#: Text that came within this counts as flowing; a longer pause turns the spinner again.
FLOW_SECONDS = 1.0
#: While text flows the window ticks this often (the line gate's frames are as far apart).
FLOW_TICK_SECONDS = 0.5


class Clock:
    """Ticks `app` while a turn runs; `frame` numbers the spinner's frames.

    `turns`: is a turn running, since when; `bridge`: the core's events, deltas held for the
    tick; `take_events`: the app applies what the bridge holds (as its pace allows)."""

    def __init__(
        self,
        app: App[int],
        turns: TurnController,
        bridge: notes.EventBridge,
        take_events: Callable[[], Awaitable[None]],
        pace: notes.TakePace | None = None,
    ) -> None:
        self.app = app
        #: Over its share of the time (a flood of rows), the window skips the spinner's frames.
        self.pace = pace
        self.turns = turns
        self.bridge = bridge
        self.take_events = take_events
        self.frame = 0
        #: The model's text flows, or the window is over its share: nothing animates (the
        #: spinner, the prompt's cursor), the clock ticks slower.
        self.flowing = False
        self._elapsed_at = float("-inf")
        self._clocks: tuple[Timer, Timer] | None = None  # every tick; every tick while flowing
        self._asleep = False
        # Looked up once, at `start` (a query walks the DOM: every mounted block).
        self._widgets: tuple[Transcript, StatusLine, PromptInput] | None = None

    def widgets(self) -> tuple[Transcript, StatusLine, PromptInput]:
        if self._widgets is None:
            query = self.app.query_one
            self._widgets = (query(Transcript), query(StatusLine), query(PromptInput))
        return self._widgets

    def start(self) -> None:
        """Tick from now on (not in still mode: snapshots have no motion)."""
        transcript, status_line, _ = self.widgets()
        transcript.clocked = True
        self._clocks = (
            self.app.set_interval(TICK_SECONDS, self._clock),
            self.app.set_interval(FLOW_TICK_SECONDS, self._clock, pause=True),
        )
        self.app.watch(status_line, "state", self._state_changed, init=False)

    def _over_share(self) -> bool:
        """The window is over its share of the time (`TakePace`: a flood of quick calls)."""
        return self.pace is not None and not self.pace.due()

    def _state_changed(self, state: str) -> None:
        """A state where text does not flow (a tool runs, the turn ended): animate at once."""
        self.wake()
        if state not in FLOWING_STATES and not self._over_share():
            self._flow(False)

    @property
    def asleep(self) -> bool:
        """No timer of the clock runs (nothing to move: the window is idle)."""
        return self._asleep

    def wake(self) -> None:
        """Tick again (a turn starts, the core sent an event): the timer of the flow's pace."""
        if self._clocks is not None and self._asleep:
            self._asleep = False
            fast, slow = self._clocks
            (slow if self.flowing else fast).resume()

    def _clock(self) -> None:
        if self.turns.running or self.bridge.pending or self.flowing:  # the cursor blinks again
            self.app.post_message(notes.Ticked())
        elif self._clocks is not None:  # nothing moves: sleep until woken
            self._asleep = True
            for timer in self._clocks:
                timer.pause()

    async def tick(self) -> None:
        """The app's `Ticked`: held deltas taken, the spinner, rows and the answer moved."""
        transcript, status_line, _ = self.widgets()
        if not status_line.is_attached:  # closing
            return
        turns = self.turns
        if self.bridge.pending:  # deltas held for this tick
            await self.take_events()
        if not turns.running:
            self._flow(False)
            return
        drew = await transcript.tick()
        since = transcript.clock() - transcript.text_at
        flows = status_line.state in FLOWING_STATES and since < FLOW_SECONDS
        self._flow(flows or self._over_share())
        if not self.flowing:
            self.frame += 1
            status_line.frame = self.frame
            for row in transcript.running_rows():
                row.tick(self.frame)
        now = transcript.clock()
        # With the answer's frame, or a frame of its own once a second (the model thinking
        # behind its folded reasoning draws nothing else); only a changed text is drawn.
        if drew or not self.flowing or now - self._elapsed_at >= 1.0:
            status_line.elapsed = format_elapsed(turns.elapsed())
            self._elapsed_at = now

    def _flow(self, flowing: bool) -> None:
        """Text starts or stops flowing: the prompt's cursor stops or starts blinking, and the
        window ticks slower or faster again."""
        if flowing != self.flowing:
            self.flowing = flowing
            self.widgets()[2].cursor_blink = not flowing
            if self._clocks is not None:
                self._asleep = False
                fast, slow = self._clocks
                (fast.pause if flowing else fast.resume)()
                (slow.resume if flowing else slow.pause)()
