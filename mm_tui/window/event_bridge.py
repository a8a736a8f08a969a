"""Brings the core's events from its worker thread to the UI thread, in order, in batches.

The sink never blocks the worker (no `call_from_thread` round trip per token): events are
queued under a lock and one `EventsArrived` message is posted until the UI drains the queue.
Consecutive text deltas are joined on the way, so a fast stream costs few UI updates.

The window's own workers use the same road for their notes (`AgentReady`, `TurnWorkerDone`,
`ModelsListed`, `TopLineChanged`, `UndoDone`, `SessionsListed`, `SessionOpened`): a worker posts,
it never touches a widget.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from textual.message import Message
from textual.message_pump import MessagePump

from mm_tui.agent.events import (
    Event,
    Notice,
    NoticeLevel,
    PermissionRequest,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolOutputDelta,
    TurnEnded,
    TurnStarted,
    Usage,
)
from mm_tui.agent.port import AgentPort

if TYPE_CHECKING:  # fields' types only: the sessions' code loads with the core, not at start
    from mm_tui.agent.checkpoints import UndoResult
    from mm_tui.agent.session_index import SessionInfo


@dataclass(frozen=True)
class AgentReady:
    """The window's own note: the port (Agent or replay) was built in its worker thread."""

    port: AgentPort


@dataclass(frozen=True)
class TurnWorkerDone:
    """The window's own note: `run_turn` returned (or raised); a queued message may start."""

    ended: TurnEnded


@dataclass(frozen=True)
class ModelsListed:
    """The window's own note: the server's models, for `/model`'s picker."""

    models: tuple[str, ...]
    current: str


@dataclass(frozen=True)
class TopLineChanged:
    """The window's own note: a setting the top line shows changed in a worker."""


@dataclass(frozen=True)
class UndoDone:
    """The window's own note: `/undo` ran in a worker; what it did."""

    result: UndoResult


@dataclass(frozen=True)
class SessionsListed:
    """The window's own note: this directory's sessions, for `/resume`'s picker."""

    sessions: tuple[SessionInfo, ...]
    current: str


@dataclass(frozen=True)
class SessionOpened:
    """The window's own note: `/resume` went to another session (`switched`), or said why not.
    The transcript then shows that session's conversation, then `notices`."""

    notices: tuple[Notice, ...]
    switched: bool


@dataclass(frozen=True)
class UserMessageShown:
    """The window's own note: the person's message, as shown (pastes folded). It goes through
    the bridge so that it is drawn before the turn it starts: the worker's first events may
    already wait here when the window next looks (a tick queued earlier takes them)."""

    text: str


@dataclass(frozen=True)
class WindowNotice:
    """The window's own line (an attachment, a refusal), in order with the core's events."""

    level: NoticeLevel
    text: str


WindowNote = (
    UserMessageShown
    | WindowNotice
    | AgentReady
    | TurnWorkerDone
    | ModelsListed
    | TopLineChanged
    | UndoDone
    | SessionsListed
    | SessionOpened
)
WindowEvent = Event | WindowNote


class EventsArrived(Message):
    """Tells the app that `EventBridge.take()` has events for it."""


class EventsSettled(Message):
    """The events `EventsArrived` announced had `SETTLE_SECONDS` to come whole: take them."""


#: The window takes the core's events this long after the first of a burst arrives: the core
#: sends an answer's end, its summary and the turn's end (or a turn's start, its message and
#: its state) a few milliseconds apart, and taken together they are one layout and one frame
#: instead of one each (~5 ms of the model's machine apiece: bench/bench_window.py).
SETTLE_SECONDS = 0.02
#: While events flood in (a turn of hundreds of quick calls), the window's own thread (taking
#: them, laying out, drawing) may use at most this share of the time: its work holds the GIL
#: the core's thread needs, and such a turn took 4 times as long in the window as in `-p` ...
WINDOW_SHARE = 0.05
#: ... after a burst of this many CPU seconds, which a window that was quiet spends at once
#: (a first token, a turn's end are never held back) ...
BURST_SECONDS = 0.1
#: ... and what arrived never waits longer than this to be taken.
MOST_WAIT_SECONDS = 1.0


class TakePace:
    """When the window may next take events: `SETTLE_SECONDS` after the first of a burst, or
    later while its takes cost more than `WINDOW_SHARE` of the time (a token bucket: it earns
    `WINDOW_SHARE` CPU seconds a second, holds at most `BURST_SECONDS`, and each take spends
    what its thread's CPU clock `cpu` says it cost, from its start to its frame drawn). Rows
    then come in fewer, larger batches: each lays the screen out and repaints the followed
    view once, whatever it holds."""

    def __init__(
        self,
        cpu: Callable[[], float] = time.thread_time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cpu = cpu
        self._clock = clock
        self._credit = BURST_SECONDS
        self._at = clock()
        self._take_cpu: float | None = None  # the CPU clock when the take being drawn began

    def _earn(self) -> float:
        """The credit now, less what the take being drawn has cost so far: events that come
        while it is drawn (the core sends on) are paced by it too, not taken 20 ms after it
        as if it were free."""
        now = self._clock()
        self._credit = min(BURST_SECONDS, self._credit + (now - self._at) * WINDOW_SHARE)
        self._at = now
        return self._credit - (0.0 if self._take_cpu is None else self._cpu() - self._take_cpu)

    def taken(self) -> None:
        """A take begins."""
        if self._take_cpu is None:
            self._take_cpu = self._cpu()

    def drawn(self) -> None:
        """The frame after the take is drawn: the take's cost is spent."""
        if self._take_cpu is not None:
            self._earn()
            self._credit -= self._cpu() - self._take_cpu
            self._take_cpu = None

    def wait(self) -> float:
        """Seconds from now until the next take."""
        owed = -self._earn()
        return min(MOST_WAIT_SECONDS, max(SETTLE_SECONDS, owed / WINDOW_SHARE))

    def due(self) -> bool:
        """Whether the window is within its share (a take now need not wait)."""
        return self._earn() >= 0


class Ticked(Message):
    """The window's clock (10 times a second while a turn runs): spinner, durations, and
    the streaming answer move in one frame."""


def _joined(last: WindowEvent | None, event: WindowEvent) -> WindowEvent | None:
    """`last` and `event` as one event, or None when they do not join."""
    if isinstance(event, TextDelta) and isinstance(last, TextDelta):
        return replace(last, text=last.text + event.text)
    if isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
        return replace(last, text=last.text + event.text)
    if (
        isinstance(event, ToolOutputDelta)
        and isinstance(last, ToolOutputDelta)
        and last.call_id == event.call_id
    ):
        return replace(last, text=last.text + event.text)
    return None


#: Events of which only the last of a take shows (the state text, the context used): the
#: ones before it are dropped (a take is drawn in one frame).
SUPERSEDED = (SpinnerChanged, Usage)


def coalesce(events: list[WindowEvent]) -> list[WindowEvent]:
    """Join consecutive TextDelta, ReasoningDelta, and ToolOutputDelta of one call; drop a
    `SUPERSEDED` event followed by another of its kind (a flood of calls brings hundreds)."""
    last = {type(event): n for n, event in enumerate(events) if isinstance(event, SUPERSEDED)}
    joined: list[WindowEvent] = []
    for n, event in enumerate(events):
        if isinstance(event, SUPERSEDED) and last[type(event)] != n:
            continue
        both = _joined(joined[-1] if joined else None, event)
        if both is not None:
            joined[-1] = both
        else:
            joined.append(event)
    return joined


#: Deltas the window may leave queued for its next tick (`EventBridge.hold_deltas`).
HELD = (TextDelta, ReasoningDelta)
#: Events a person waits for (the first words, a question, the turn's start and end): taken
#: `SETTLE_SECONDS` after they come, never later (`TakePace` spaces the others out).
URGENT = (
    TextDelta,
    ReasoningDelta,
    TurnStarted,
    TurnEnded,
    PermissionRequest,
    UserMessageShown,
    AgentReady,
    TurnWorkerDone,
)


class EventBridge:
    """The sink handed to the Agent: callable from any thread, never blocks for long.

    While `hold_deltas` is set (the window ticks and an answer is already on screen), a text
    or reasoning delta is queued without waking the window: the window's tick takes it, so a
    model sending 50 tokens a second costs 10 wake-ups a second, not 50. Any other event
    wakes the window at once and takes the held deltas with it, in order.
    """

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._pending: list[WindowEvent] = []
        self._announced = False
        self.hold_deltas = False
        #: An `URGENT` event waits (announced again if the others were announced before it).
        self.urgent = False

    def __call__(self, event: WindowEvent) -> None:
        with self._lock:
            self._pending.append(event)
            if self.hold_deltas and isinstance(event, HELD):
                return
            urgent = isinstance(event, URGENT)
            if self._announced and (self.urgent or not urgent):
                return
            self._announced = True
            self.urgent = self.urgent or urgent
        self._target.post_message(EventsArrived())

    @property
    def announced(self) -> bool:
        """Events other than held deltas wait: an `EventsArrived` was posted for them."""
        return self._announced

    @property
    def pending(self) -> bool:
        """Whether events wait to be taken."""
        return bool(self._pending)

    def take(self) -> list[WindowEvent]:
        """Every event queued so far, oldest first, deltas joined."""
        with self._lock:
            events, self._pending = self._pending, []
            self._announced = self.urgent = False
        return coalesce(events)
