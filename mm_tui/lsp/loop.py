"""An asyncio loop on its own daemon thread, so synchronous callers can talk to servers.

The agent runs tools in a worker thread and waits for each call; the servers' conversations
(reading their output, answering their requests) must go on between calls. They live on this
loop; a call hands it a coroutine and waits, watching its cancel flag meanwhile.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, TypeVar

T = TypeVar("T")

_POLL_SECONDS = 0.05  # how often a waiting caller looks at its cancel flag
_SETTLE_SECONDS = 1.0  # how long a cancelled coroutine may take to clean up


class CallCancelled(Exception):
    """The caller's cancel flag was raised while it waited."""


class LoopThread:
    """Owns the loop and its thread; started on first use, stopped by `stop`."""

    def __init__(self, name: str = "mm-tui-lsp") -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or not self.running:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(
                    target=self._run, args=(loop,), name=self._name, daemon=True
                )
                self._loop, self._thread = loop, thread
                thread.start()
            return self._loop

    @staticmethod
    def _run(loop: asyncio.AbstractEventLoop) -> None:
        asyncio.set_event_loop(loop)
        loop.run_forever()

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> Future[T]:
        """Schedule `coroutine` on the loop; the caller decides how to wait."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._ensure_started())

    def run(
        self,
        coroutine: Coroutine[Any, Any, T],
        limit: float,
        cancel: threading.Event | None = None,
    ) -> T:
        """Run `coroutine` to its end and return its result.

        Raises CallCancelled when `cancel` is set, TimeoutError after `limit` seconds (the
        coroutine is cancelled in both cases), or whatever the coroutine raised.
        """
        finished = threading.Event()
        future = self.submit(_signalling(coroutine, finished))
        deadline = time.monotonic() + limit
        while True:
            try:
                return future.result(timeout=_POLL_SECONDS)
            except FutureTimeout:
                pass
            interrupted = cancel is not None and cancel.is_set()
            if interrupted or time.monotonic() >= deadline:
                future.cancel()
                finished.wait(_SETTLE_SECONDS)  # let its cleanup (cancel the request) run
                raise CallCancelled if interrupted else TimeoutError

    def stop(self, timeout: float = 2.0) -> None:
        """Stop the loop and join its thread; pending work is abandoned."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout)
        if not thread.is_alive():
            loop.close()


async def _signalling(coroutine: Coroutine[Any, Any, T], finished: threading.Event) -> T:
    """Run `coroutine`, then raise `finished` however it ended."""
    try:
        return await coroutine
    finally:
        finished.set()
