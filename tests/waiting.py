"""Waiting in a test for what another thread or process does: poll until it holds, or fail
saying what never came and what was last seen instead.

Every wait names its bound and its interval where it is called. The bound only stops a broken
test from hanging: nothing here measures speed (bench/ does)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: How much of the last value seen a failure shows: its end, where a screen or a log changed.
SHOWN = 2000


def wait_until(
    look: Callable[[], T],
    what: str,
    *,
    until: Callable[[T], object] = bool,
    timeout: float,
    interval: float,
) -> T:
    """`look()`'s first value that `until` accepts (by default: a true one).

    Raises AssertionError naming `what` and the last value seen if none came within `timeout`
    seconds. A `look` may assert itself, to stop at once on a fault (a process that died).
    """
    held, value = _poll(look, until, timeout, interval)
    if not held:
        raise AssertionError(never(what, timeout, value))
    return value


def holds_within(condition: Callable[[], object], *, timeout: float, interval: float) -> bool:
    """Whether `condition()` came true within `timeout` seconds: for a caller that goes on
    either way (a helper thread that gives up, a test that asserts more precisely after)."""
    return _poll(condition, bool, timeout, interval)[0]


def _poll(
    look: Callable[[], T], until: Callable[[T], object], timeout: float, interval: float
) -> tuple[bool, T]:
    """Whether `until` accepted a value of `look()` before the deadline, and the last value."""
    deadline = time.monotonic() + timeout
    while not until(value := look()):
        if time.monotonic() >= deadline:
            return False, value
        time.sleep(interval)
    return True, value


async def await_until(
    look: Callable[[], T],
    what: str,
    *,
    until: Callable[[T], object] = bool,
    timeout: float,
    interval: float,
) -> T:
    """`wait_until` for a coroutine: the event loop runs on between looks."""
    deadline = time.monotonic() + timeout
    while not until(value := look()):
        if time.monotonic() >= deadline:
            raise AssertionError(never(what, timeout, value))
        await asyncio.sleep(interval)
    return value


def never(what: str, timeout: float, last: object) -> str:
    """The failure: what was waited for, for how long, and the end of what was last seen (text
    as it reads, a screen line by line; anything else as its repr)."""
    shown = last if isinstance(last, str) else repr(last)
    if len(shown) > SHOWN:
        shown = "…" + shown[-SHOWN:]
    separator = "\n" if isinstance(last, str) else " "
    return f"never within {timeout:g} s: {what}\nlast seen:{separator}{shown}"
