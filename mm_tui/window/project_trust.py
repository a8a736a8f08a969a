"""The window's side of trusting a project at start (agent/trust.py): the question to ask, and what
each answer does — record it, and after a "trust", the config as the CLI now loads it with the
port factory for it. The app only shows the question and builds the port it is given."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mm_tui.agent.trust_question import TrustQuestion, accept, decline
from mm_tui.window.ports import PortFactory

if TYPE_CHECKING:
    from mm_tui.agent.config import Config


@dataclass(frozen=True)
class ProjectTrust:
    """`reload`: the config loaded again (same files, environment and flags); `factory_for`:
    the port factory for a config (the live Agent, with the session options)."""

    question: TrustQuestion
    reload: Callable[[], Config]
    factory_for: Callable[[Config], PortFactory]

    def answer(self, trusted: bool | None) -> tuple[Config, PortFactory] | None:
        """Record the answer; after a "trust", the config now obeyed and its factory.
        None (Esc) records nothing: the question comes again at the next start."""
        if trusted is None:
            return None
        if not trusted:
            decline(self.question)
            return None
        accept(self.question)
        config = self.reload()
        return config, self.factory_for(config)
