"""The messages typed while a turn runs, waiting their turn.

A plain queue, with one state more: after Esc interrupts a turn with messages waiting, the
queue is *held* — nothing more is sent until the person says so (`/queue`, or a new message, which
goes after them), and meanwhile they may take a message back to edit it (Alt+↑, as in Codex)
or drop them all (`/queue clear`). Pure Python: the controller shows it through its surface.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator


class MessageQueue:
    """Messages in the order they were typed; `held` stops the next from being sent."""

    def __init__(self) -> None:
        self._items: deque[str] = deque()
        self.held = False

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def append(self, text: str) -> None:
        self._items.append(text)

    def ready(self) -> bool:
        """Whether a message may be sent now (one waits and the queue is not held)."""
        return bool(self._items) and not self.held

    def popleft(self) -> str:
        """The oldest message, taken out to be sent."""
        return self._items.popleft()

    def take_last(self) -> str | None:
        """The newest message, taken out to be edited (None: the queue is empty)."""
        return self._items.pop() if self._items else None

    def hold(self) -> bool:
        """Hold the messages (Esc during a turn); True when there was something to hold."""
        self.held = bool(self._items)
        return self.held

    def release(self) -> None:
        self.held = False

    def clear(self) -> int:
        """Drop every message; how many there were."""
        count = len(self._items)
        self._items.clear()
        self.held = False
        return count
