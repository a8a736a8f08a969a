"""The tally of one turn: what its tools counted, the tokens it cost and how long it took —
the summary line after every turn (SPEC §7)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from mm_tui.agent.events import ToolKind, TurnSummary


@dataclass
class TurnTally:
    """Counters, tokens and time of one turn, turned into a `TurnSummary` at its end."""

    started: float = field(default_factory=time.monotonic)
    kinds: Counter[ToolKind] = field(default_factory=Counter[ToolKind])
    prompt_tokens: int = 0
    completion_tokens: int = 0
    warned_truncation: bool = False  # the budget warning is said once a turn

    def count(self, kind: ToolKind) -> None:
        self.kinds[kind] += 1

    def add_usage(self, prompt: int, completion: int) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    def summary(self) -> TurnSummary:
        return TurnSummary.of(
            self.kinds,
            duration=time.monotonic() - self.started,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )
