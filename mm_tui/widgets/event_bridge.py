"""Brings the core's events from its worker thread to the UI thread, in order, in batches.

The sink never blocks the worker (no `call_from_thread` round trip per token): events are
queued under a lock and one `EventsArrived` message is posted until the UI drains the queue.
Consecutive text deltas are joined on the way, so a fast stream costs few UI updates.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Any

from textual.message import Message
from textual.message_pump import MessagePump

from mm_tui.agent.events import ReasoningDelta, TextDelta, ToolOutputDelta, TurnEnded


@dataclass(frozen=True)
class AgentReady:
    """The app's own note: the Agent was built in its worker thread."""

    agent: Any


@dataclass(frozen=True)
class TurnWorkerDone:
    """The app's own note: `run_turn` returned (or raised); a queued message may start."""

    ended: TurnEnded


class EventsArrived(Message):
    """Tells the app that `EventBridge.take()` has events for it."""


def _joinable(last: Any, event: Any) -> bool:
    if isinstance(event, TextDelta | ReasoningDelta):
        return type(last) is type(event)
    return (
        isinstance(event, ToolOutputDelta)
        and isinstance(last, ToolOutputDelta)
        and last.call_id == event.call_id
    )


def coalesce(events: list[Any]) -> list[Any]:
    """Join consecutive TextDelta, ReasoningDelta, and ToolOutputDelta of one call."""
    joined: list[Any] = []
    for event in events:
        last = joined[-1] if joined else None
        if _joinable(last, event):
            joined[-1] = replace(last, text=last.text + event.text)
        else:
            joined.append(event)
    return joined


class EventBridge:
    """The sink handed to the Agent: callable from any thread, never blocks for long."""

    def __init__(self, target: MessagePump) -> None:
        self._target = target
        self._lock = threading.Lock()
        self._pending: list[Any] = []
        self._announced = False

    def __call__(self, event: Any) -> None:
        with self._lock:
            self._pending.append(event)
            if self._announced:
                return
            self._announced = True
        self._target.post_message(EventsArrived())

    def take(self) -> list[Any]:
        """Every event queued so far, oldest first, deltas joined."""
        with self._lock:
            events, self._pending = self._pending, []
            self._announced = False
        return coalesce(events)
