"""The conversation and its session file (SPEC §8): opening it (new, --resume, --continue),
appending messages, recording tool rows, errors and totals, and saving after each change.

The turn loop's parts write the history only through this object, so what is on disk always
follows what the model will be sent.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mm_tui.agent.events import EventSink, Notice, ToolKind, TurnEnded, TurnSummary
from mm_tui.agent.session import (
    Session,
    SessionError,
    SessionStore,
    answer_unfinished_calls,
)
from mm_tui.agent.tool_record import ToolRecord

log = logging.getLogger(__name__)


class Conversation:
    """The session being talked in, and the store that keeps it on disk."""

    def __init__(
        self,
        store: SessionStore,
        sink: EventSink,
        fresh: Callable[[], Session],
    ) -> None:
        self.store = store
        self.sink = sink
        self._fresh = fresh
        self.session: Session = fresh()  # until `open` finds the one asked for

    # -- opening ------------------------------------------------------------------------

    def open(self, resume: str | None, continue_last: bool, cwd: Path) -> list[Notice]:
        """Open the session asked for (or start a new one); the start banner's notices."""
        notices: list[Notice] = []
        session: Session | None = None
        try:
            if resume:
                session = self.store.load(resume)
            elif continue_last:
                session = self.store.latest_for(cwd)
                if session is None:
                    notices.append(
                        Notice("info", f"no earlier session in {cwd} — starting a new one")
                    )
        except SessionError as exc:
            log.debug("session %s could not be opened", resume or cwd, exc_info=True)
            notices.append(
                Notice("error", f"{exc} — the file is kept as it is; starting a new session")
            )
            session = None
        if session is None:
            return notices
        if answer_unfinished_calls(session.messages):
            notices.append(
                Notice("warning", "the last session stopped in the middle of a tool call")
            )
        notices.append(
            Notice("info", f"resumed session {session.id} ({len(session.messages)} messages)")
        )
        self.session = session
        return notices

    def start_new(self) -> None:
        """`/new`: a fresh session (the old file stays as it is)."""
        self.session = self._fresh()

    @property
    def path(self) -> Path:
        return self.store.path_for(self.session.id)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return self.session.messages

    # -- writing ------------------------------------------------------------------------

    def append(self, message: dict[str, Any]) -> None:
        """Add one message to the history and save."""
        self.session.messages.append(message)
        self.save()

    def replace_messages(self, messages: list[dict[str, Any]]) -> None:
        """The whole history changes at once (compaction); saved."""
        self.session.messages = messages
        self.save()

    def record_tool(self, call_id: str, record: ToolRecord, output: str) -> None:
        """A tool call's result: its row kept beside it, then the tool message (saved)."""
        self.session.tool_meta[call_id] = record
        self.append({"role": "tool", "tool_call_id": call_id, "content": output})

    def add_error(self, where: str, message: str, *, save: bool = True) -> None:
        """An entry of the session's `errors` (SPEC §3, §5)."""
        self.session.add_error(where, message)
        if save:
            self.save()

    def end_with_error(self, where: str, message: str) -> TurnEnded:
        """A turn ends on a fault: the line goes to `errors`, to the person, and ends it."""
        self.add_error(where, message)
        self.sink(Notice("error", message))
        return TurnEnded("error", message)

    def set_model(self, name: str) -> None:
        self.session.model = name
        self.save()

    def add_totals(self, summary: TurnSummary) -> None:
        """Add one turn's counters and tokens to the session's totals, and save."""
        counters = self.session.counters
        for kind in ToolKind:
            counters[kind.value] = counters.get(kind.value, 0) + summary.count(kind)
        counters["turns"] = counters.get("turns", 0) + 1
        usage = self.session.usage
        usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + summary.prompt_tokens
        usage["completion_tokens"] = usage.get("completion_tokens", 0) + summary.completion_tokens
        self.save()

    def save(self) -> None:
        """Write the session; a failure is said as a notice, never raised into the turn."""
        try:
            self.store.save(self.session)
        except OSError as exc:
            log.debug("could not save session %s", self.session.id, exc_info=True)
            self.sink(Notice("error", f"could not save the session ({exc.strerror or exc})"))
