"""How long one bash call may run: the configured limit, or what the call asks within a ceiling.

The seed's limit is 30 s and its line `[error: 30s timeout exceeded]`; both stay the default
(`bashTimeout`). Test suites and builds take longer, so a call may ask for more with an
optional `timeout` argument, capped by `bashTimeoutMax`. Peers do the same: Claude Code's Bash
and OpenCode's bash take `timeout` in milliseconds up to 600,000 (ten minutes), Codex's shell
`timeout_ms`. mm-tui counts in seconds, as its config and its timeout line do: a small model
writes `"timeout": 600` more reliably than a count of milliseconds, and one that sends
milliseconds anyway is capped by the ceiling and told so, never left running for days.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mm_tui.agent.tools.arguments import argument_map

DEFAULT_SECONDS = 30.0
#: Ten minutes, the most Claude Code's and OpenCode's bash allow a call to ask.
DEFAULT_CEILING_SECONDS = 600.0
FIELD = "timeout"
CAPPED_LINE = (
    "[note: timeout {asked}s is above the {ceiling}s allowed (bashTimeoutMax), "
    "so the command ran with {ceiling}s]"
)
UNREADABLE_LINE = "[note: timeout must be a number of seconds; the command ran with {default}s]"
#: The row's words after the command when a call runs with another limit than the default.
ROW_LABEL = " · timeout {duration}"
HUGE_SECONDS = 1e18


@dataclass(frozen=True)
class CallTimeout:
    """The seconds one call runs with, and the line the model reads when its ask was changed."""

    seconds: float
    note: str = ""


@dataclass(frozen=True)
class TimeoutPolicy:
    """`bashTimeout` and `bashTimeoutMax`: the default limit and the most a call may ask."""

    default: float = DEFAULT_SECONDS
    ceiling: float = DEFAULT_CEILING_SECONDS

    def for_call(self, args: object) -> CallTimeout:
        """The call's limit: its `timeout` within the ceiling, else the default."""
        value = argument_map(args).get(FIELD)
        if value is None or value == "":
            return CallTimeout(self.default)
        asked = _seconds(value)
        if asked is None:
            return CallTimeout(self.default, UNREADABLE_LINE.format(default=_g(self.default)))
        ceiling = max(self.ceiling, self.default)
        if asked > ceiling:
            return CallTimeout(ceiling, CAPPED_LINE.format(asked=_g(asked), ceiling=_g(ceiling)))
        return CallTimeout(asked)

    def row_label(self, args: object) -> str:
        """` · timeout 10m` when the call runs with another limit than the default, else ""."""
        seconds = self.for_call(args).seconds
        return "" if seconds == self.default else ROW_LABEL.format(duration=duration_text(seconds))


def _seconds(value: Any) -> float | None:
    """A positive, finite number of seconds from `600`, `600.0` or `"600"`; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip().removesuffix("s"))
        except ValueError:
            return None
    if not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:  # a whole number past any float: far above every ceiling
        return HUGE_SECONDS
    return number if 0 < number < float("inf") else None


def _g(seconds: float) -> str:
    return f"{seconds:g}"


def duration_text(seconds: float) -> str:
    """`45s`, `10m`, `2m30s`, `1h`, `1h30m`: the limit as a person reads it on the row."""
    if seconds != int(seconds) or seconds < 60:
        return f"{_g(seconds)}s"
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    parts = [
        f"{hours}h" if hours else "",
        f"{minutes}m" if minutes else "",
        f"{secs}s" if secs else "",
    ]
    return "".join(parts)
