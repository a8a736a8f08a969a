"""What the window's turn controller asks of the screen (the app implements it).

Its own module so that the controller and its intents' bases share it without a cycle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from mm_tui.agent.events import NoticeLevel
from mm_tui.agent.port import TopLineView


class TurnSurface(Protocol):
    """What the controller asks of the screen; the app implements it."""

    def say(self, level: NoticeLevel, text: str) -> None:
        """One notice line in the transcript."""
        ...

    def show_user_message(self, text: str) -> None: ...

    def show_queue(self, queued: Sequence[str], *, held: bool = False) -> None:
        """The waiting messages; `held`: kept after Esc, not sent until the person says."""
        ...

    def show_status(self, state: str, elapsed: float | None) -> None:
        """The status line's spinner text, and the turn's time (None: not shown)."""
        ...

    def show_top_line(self, view: TopLineView) -> None: ...

    def keys_changed(self) -> None:
        """Which keys work changed (a question opened, a turn started or ended)."""
        ...

    def run_in_thread(
        self, work: Callable[[], None], *, group: str = "default", exclusive: bool = False
    ) -> None:
        """Run blocking `work` in a thread worker; it reports through the sink only."""
        ...

    def restart_transcript(self, notice: str, then: Callable[[], None]) -> None:
        """Clear the transcript, say `notice`, then call `then`."""
        ...
