"""When the window takes the core's events (event_bridge.TakePace): at once when it was quiet,
spaced out while its takes cost more than its share of the time. Clocks are the test's own:
nothing here is timed."""

from __future__ import annotations

from mm_tui.agent.events import Notice, TextDelta, ToolFinished, ToolStarted, ToolStatus, TurnEnded
from mm_tui.window.event_bridge import (
    BURST_SECONDS,
    MOST_WAIT_SECONDS,
    SETTLE_SECONDS,
    WINDOW_SHARE,
    EventBridge,
    TakePace,
)


class Clocks:
    """A wall clock and the window thread's CPU clock, moved by hand."""

    def __init__(self) -> None:
        self.wall = 1000.0
        self.cpu = 5.0

    def pace(self) -> TakePace:
        return TakePace(cpu=lambda: self.cpu, clock=lambda: self.wall)

    def take(self, pace: TakePace, cost: float, after: float) -> None:
        """A take `after` seconds from now whose work, its frame included, costs `cost`."""
        self.wall += after
        pace.taken()
        self.cpu += cost
        self.wall += cost
        pace.drawn()


def test_a_quiet_window_takes_at_once_even_after_a_costly_take() -> None:
    clocks = Clocks()
    pace = clocks.pace()
    assert pace.wait() == SETTLE_SECONDS and pace.due()
    clocks.take(pace, BURST_SECONDS / 2, after=0.0)  # within the burst: the next is not held
    assert pace.wait() == SETTLE_SECONDS
    clocks.take(pace, 0.2, after=0.0)  # over it: the next waits ...
    assert not pace.due() and pace.wait() > SETTLE_SECONDS
    clocks.wall += 60  # ... until the window has been quiet long enough
    assert pace.due() and pace.wait() == SETTLE_SECONDS


def test_a_flood_of_costly_takes_is_spaced_to_the_share_and_never_waits_too_long() -> None:
    clocks = Clocks()
    pace = clocks.pace()
    busy, wall = 0.0, clocks.wall
    for _ in range(200):  # each take waits what the pace says, then costs 30 ms
        clocks.take(pace, 0.03, after=pace.wait())
        busy += 0.03
    share = busy / (clocks.wall - wall)
    assert share <= WINDOW_SHARE * 1.1, share  # the burst allowance aside
    clocks.take(pace, 5.0, after=0.0)  # one enormous take
    assert pace.wait() == MOST_WAIT_SECONDS


def test_events_that_come_while_a_take_is_drawn_wait_for_what_it_cost_so_far() -> None:
    """The core sends on while the window lays a take out and draws it: the first event of
    the next burst is paced by that take, not taken 20 ms after it as if it were free (the
    flood's takes then came twice as often as the share allows)."""
    clocks = Clocks()
    pace = clocks.pace()
    clocks.take(pace, BURST_SECONDS, after=0.0)  # the burst allowance spent
    clocks.wall += 0.4  # quiet a while: within the share again (0.02 s of credit)
    assert pace.due()
    pace.taken()  # a take begins; its frame is not drawn yet ...
    clocks.cpu += 0.05
    clocks.wall += 0.05
    assert not pace.due() and pace.wait() > SETTLE_SECONDS  # ... and the next waits for it
    pace.drawn()
    assert not pace.due() and pace.wait() > SETTLE_SECONDS


class Target:
    """Counts the `EventsArrived` the bridge posts."""

    def __init__(self) -> None:
        self.posted = 0

    def post_message(self, message: object) -> bool:
        self.posted += 1
        return True


def test_an_event_a_person_waits_for_is_announced_even_behind_a_paced_burst() -> None:
    """Rows of a flood wait for the pace; the turn's end, a question or the first words that
    come behind them are announced again, so the window takes them all without the wait."""
    target = Target()
    bridge = EventBridge(target)  # type: ignore[arg-type]
    bridge(ToolStarted("c1", "bash", {}, "bash echo 1"))
    bridge(ToolFinished("c1", "bash", "", ToolStatus.DONE, 0.1, "1\n"))
    assert (target.posted, bridge.urgent) == (1, False)  # one announcement for the burst
    bridge(TurnEnded("answered"))
    bridge(Notice("info", "after"))
    assert (target.posted, bridge.urgent) == (2, True)  # the end, announced once more
    assert len(bridge.take()) == 4 and not bridge.urgent
    bridge.hold_deltas = True
    bridge(TextDelta("held for the tick"))
    assert target.posted == 2
