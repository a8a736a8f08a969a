"""When a streaming answer's new lines go to the screen: line by line, not token by token.

A frame costs the model's machine 2 to 3.5 ms of CPU in Textual whatever it shows (the bench: at
50 tokens a second, a frame per token or per tick was most of the window's CPU). So, as Codex's
terminal does, the answer is drawn when whole wrapped lines are complete, not on every token:
- a frame when the laid-out answer gained one or more lines (the line above them is complete;
  the partial last line is drawn with them), at most one every `LINE_FRAME_SECONDS` whatever
  the token rate (several lines complete at once are one frame);
- a heartbeat: a change not drawn for `HEARTBEAT_SECONDS` (a model pausing mid-line, text that
  only changes the last line) is drawn then, so nothing written stays hidden longer;
- `force`: the end of the message, an interrupt, a tool call starting, the person scrolling;
- a huge open block (a list of thousands of items) is parsed again whole at each layout: the
  frames space out so that laying out takes at most a `1 / LAYOUT_SHARE` of the time.

The gate holds no text: the answer asks it and says when it drew.
"""

from __future__ import annotations

from collections.abc import Callable

#: Lines that complete closer together than this are drawn in one frame.
LINE_FRAME_SECONDS = 0.5
#: A change (the partial last line) never waits longer than this to be drawn.
HEARTBEAT_SECONDS = 1.0
#: Frames are at least this many times the last layout's duration apart.
LAYOUT_SHARE = 3


class LineGate:
    """Says when to draw what a stream laid out; `clock` is the window's (monotonic)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self.clock = clock
        self._drawn_at = float("-inf")
        self._pending_since: float | None = None
        self._spacing = LINE_FRAME_SECONDS

    @property
    def pending(self) -> bool:
        """Something was laid out that is not drawn yet."""
        return self._pending_since is not None

    def changed(self) -> None:
        """The laid-out lines changed since they were last drawn."""
        if self._pending_since is None:
            self._pending_since = self.clock()

    def lines_due(self) -> bool:
        """Whether completed lines may be drawn now (the last frame was long enough ago)."""
        return self.pending and self.clock() - self._drawn_at >= self._spacing

    def overdue(self) -> bool:
        """Whether a change waited `HEARTBEAT_SECONDS` undrawn: draw it, lines or not."""
        since = self._pending_since
        return since is not None and self.clock() - since >= HEARTBEAT_SECONDS

    def laid_out(self, seconds: float) -> None:
        """Laying the text out took `seconds`."""
        self._spacing = max(LINE_FRAME_SECONDS, LAYOUT_SHARE * seconds)

    def drawn(self) -> None:
        """Everything laid out is drawn."""
        self._drawn_at = self.clock()
        self._pending_since = None
