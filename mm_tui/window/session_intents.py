"""`/resume`: the session picker's intents, a base of `TurnController`.

Listing reads the index (thousands of sessions: a thread), opening reads and locks a file (a
thread too); each reports through the sink as a window note (`SessionsListed`,
`SessionOpened`), never touching a widget. A session another mm-tui writes opens as a copy, as
the core decides and says (`Conversation.switch`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from mm_tui.agent.events import Notice
from mm_tui.agent.port import AgentPort
from mm_tui.window.event_bridge import SessionOpened, SessionsListed
from mm_tui.window.settings_intents import SettingsIntents

log = logging.getLogger(__name__)

RESUME = "/resume"
NO_SESSIONS = "/resume: no earlier session in {cwd}"
RESUME_FAILED = "/resume failed: {error}"


@dataclass(frozen=True)
class SessionChoice:
    """What the picker returns: a session's id, and whether to go on in a copy of it."""

    session: str
    fork: bool = False


class SessionIntents(SettingsIntents):
    """`/resume [id]`: pick one of this directory's sessions (or name one) and go on in it."""

    def resume(self, argument: str) -> None:
        """`/resume ID` opens it; `/resume` lists this directory's sessions for the picker."""
        port = self._port_for(RESUME, idle=True)
        if port is None:
            return
        if argument:
            self.surface.run_in_thread(
                lambda: self._open(port, SessionChoice(argument)), group="sessions"
            )
        else:
            self.surface.run_in_thread(lambda: self._list(port), group="sessions")

    def choose_session(self, choice: SessionChoice | None) -> None:
        """The picker's answer (None: cancelled)."""
        if choice is None:
            return
        port = self._port_for(RESUME, idle=True)
        if port is not None:
            self.surface.run_in_thread(lambda: self._open(port, choice), group="sessions")

    def _list(self, port: AgentPort) -> None:
        try:
            sessions = port.list_sessions()
        except Exception as error:  # the index is the core's; a fault is said, never raised
            log.exception("/resume could not list the sessions")
            self.sink(Notice("error", RESUME_FAILED.format(error=error)))
            return
        if not sessions:
            self.sink(Notice("info", NO_SESSIONS.format(cwd=port.top_line().cwd)))
            return
        self.sink(SessionsListed(tuple(sessions), port.session_id()))

    def _open(self, port: AgentPort, choice: SessionChoice) -> None:
        before = port.session_id()
        try:
            if choice.fork:
                notices = port.fork_session(choice.session)
            else:
                notices = port.open_session(choice.session)
        except Exception as error:
            log.exception("/resume could not open %s", choice.session)
            self.sink(Notice("error", RESUME_FAILED.format(error=error)))
            return
        self.sink(SessionOpened(tuple(notices), port.session_id() != before))
