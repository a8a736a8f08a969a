"""The messages typed while a turn runs, waiting their turn (issue 14).

Pure Python: the controller shows it through its surface.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator


class MessageQueue:
    """Messages in the order they were typed."""

    def __init__(self) -> None:
        self._items: deque[str] = deque()

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def append(self, text: str) -> None:
        self._items.append(text)

    def ready(self) -> bool:
        """Whether a message may be sent now."""
        return bool(self._items)

    def popleft(self) -> str:
        """The oldest message, taken out to be sent."""
        return self._items.popleft()
