"""The exit status of a headless turn (`mm-tui -p`), one per way a turn can end.

Scripts branch on these, so each reason has its own number (README, "Exit status").
"""

from __future__ import annotations

from mm_tui.agent.events import TurnEnded

EXIT_DONE = 0  # the model answered, or the person interrupted with Ctrl+C (history valid)
EXIT_TURN_ERROR = 1  # a server fault or an internal error ended the turn
EXIT_CONFIG_ERROR = 2  # a bad configuration file or bad flags: nothing ran
EXIT_MAX_TURNS = 3  # maxTurns model calls were spent before an answer
EXIT_LOOP = 4  # the loop detector stopped the turn (SPEC §5)
EXIT_ABORTED = 130  # a second Ctrl+C while the interrupted turn was winding down

_BY_REASON = {
    "answered": EXIT_DONE,
    "interrupted": EXIT_DONE,
    "error": EXIT_TURN_ERROR,
    "max_turns": EXIT_MAX_TURNS,
    "loop": EXIT_LOOP,
}


def exit_status(ended: TurnEnded) -> int:
    """The process's exit status for a turn that ended this way."""
    return _BY_REASON[ended.reason]
