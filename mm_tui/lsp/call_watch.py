"""What ends a call's waits early: the person's interrupt, the call's outer limit, the end.

A call of the `lsp` tool reads its server in the caller's own thread (channel.py); every wait
in it (an answer, indexing, diagnostics) looks at this watch at least every 50 ms, so `Esc`
ends a waiting call at once and no call outlives its bound (SPEC §3, §6).
"""

from __future__ import annotations

import math
import threading
import time


class CallCancelled(BaseException):
    """The caller's cancel flag was raised, or the client is closing.

    A BaseException, like asyncio's CancelledError: no handler of an ordinary failure on
    the way up may take it for one."""


class CallTooLong(BaseException):
    """The call's outer time limit passed."""


class CallWatch:
    """The cancel flag and the deadline of the call in progress (none between calls)."""

    def __init__(self) -> None:
        self._cancel: threading.Event | None = None
        self._deadline = math.inf
        self._closing = False

    def begin(self, cancel: threading.Event | None, limit: float) -> None:
        self._cancel, self._deadline = cancel, time.monotonic() + limit

    def end(self) -> None:
        """No call in progress (a close that came meanwhile has ended it)."""
        self._cancel, self._deadline, self._closing = None, math.inf, False

    def close(self) -> None:
        """The client is closing: the call in progress ends at its next look."""
        self._closing = True

    def check(self) -> None:
        """Raise CallCancelled or CallTooLong when the call must end now."""
        cancel = self._cancel
        if self._closing or (cancel is not None and cancel.is_set()):
            raise CallCancelled
        if time.monotonic() >= self._deadline:
            raise CallTooLong
