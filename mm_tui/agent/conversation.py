"""The conversation and its session file (SPEC §8): opening it (new, --resume, --continue),
appending messages, recording tool rows, errors, totals and compaction markers.

The turn loop's parts write the history only through this object, so what is on disk always
follows what the model will be sent. Every change is one appended line (`session_log`); the
file is created with the first message, synced at the end of every turn and at close.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

from mm_tui.agent.events import EventSink, Notice, ToolKind, TurnEnded, TurnSummary
from mm_tui.agent.messages import Message
from mm_tui.agent.session import OpenedSession, Session, SessionBusy, SessionError, SessionStore
from mm_tui.agent.session_log import LogLine, SessionLog, message_line
from mm_tui.agent.tool_record import ToolRecord
from mm_tui.support.terminal_text import one_line

log = logging.getLogger(__name__)

IN_USE = (
    "session {id} is in use by another mm-tui — it was left as it is; "
    "this one goes on in a copy, session {fork}"
)


class Conversation:
    """The session being talked in, and its writer (which holds the file's lock)."""

    def __init__(self, store: SessionStore, sink: EventSink, fresh: Callable[[], Session]) -> None:
        self.store = store
        self.sink = sink
        self._fresh = fresh
        self.session: Session = fresh()  # until `open` finds the one asked for
        self._log: SessionLog | None = None
        self._closed = False  # mm-tui is ending: nothing more is written
        self._lock = threading.Lock()  # the worker writes, the UI thread may close
        self.resumed = False  # the session was opened from its file (--continue, --resume)

    # -- opening ------------------------------------------------------------------------

    def open(self, resume: str | None, continue_last: bool, cwd: Path) -> list[Notice]:
        """Open the session asked for (or start a new one); the start banner's notices."""
        notices: list[Notice] = []
        target = resume
        if not resume and continue_last:
            latest = self.store.latest_for(cwd)
            if latest is None:
                notices.append(Notice("info", f"no earlier session in {cwd} — starting a new one"))
            else:
                target = latest.id
        if not target:
            return notices
        try:
            opened = self._open_or_fork(target, notices)
        except (SessionError, OSError) as exc:
            log.debug("session %s could not be opened", target, exc_info=True)
            notices.append(
                Notice("error", f"{exc} — the file is kept as it is; starting a new session")
            )
            return notices
        notices += [Notice("warning", text) for text in opened.notices]
        if opened.unfinished:
            notices.append(
                Notice("warning", "the last session stopped in the middle of a tool call")
            )
        session = opened.session
        notices.append(
            Notice("info", f"resumed session {session.id} ({len(session.messages)} messages)")
        )
        self.session, self._log = session, opened.log
        self.resumed = True
        return notices

    def switch(self, target: str, *, fork: bool = False) -> list[Notice]:
        """Leave this session (its file released) for another one, or a fork of it (the
        window's session picker). When `target` cannot be opened, nothing changes."""
        notices: list[Notice] = []
        if not fork and target == self.session.id:
            return [Notice("info", f"already in session {target}")]
        try:
            opened = self.store.fork(target) if fork else self._open_or_fork(target, notices)
        except (SessionError, OSError) as exc:
            log.debug("session %s could not be opened", target, exc_info=True)
            return [Notice("error", f"{exc} — staying in this session")]
        self._release()
        self.session, self._log = opened.session, opened.log
        self.resumed = True
        notices += [Notice("warning", text) for text in opened.notices]
        if opened.unfinished:
            notices.append(Notice("warning", "the session stopped in the middle of a tool call"))
        verb = "forked" if fork else "opened"
        notices.append(
            Notice("info", f"{verb} session {target} ({len(self.session.messages)} messages)"
                   + (f" as {self.session.id}" if fork else ""))
        )  # fmt: skip
        return notices

    def _open_or_fork(self, target: str, notices: list[Notice]) -> OpenedSession:
        try:
            return self.store.open(target)
        except SessionBusy:
            log.debug("session %s is locked by another process: forking", target, exc_info=True)
            opened = self.store.fork(target)
            notices.append(
                Notice(
                    "warning", IN_USE.format(id=opened.session.forked_from, fork=opened.session.id)
                )
            )
            return opened

    def start_new(self) -> None:
        """`/new`: a fresh session (the old file stays as it is, its lock released)."""
        self._release()
        self.session = self._fresh()
        self.resumed = False

    def close(self) -> None:
        """mm-tui ends: sync and release the file. A turn still running in a worker (the
        person quit mid-turn) writes nothing after this; its calls get results on resume."""
        with self._lock:
            self._closed = True
        self._release()

    def _release(self) -> None:
        """Sync and release the file (its lock); the index learns the latest."""
        with self._lock:
            if self._log is None:
                return
            self._log.close()
            self._log = None
        self.store.note(self.session)

    @property
    def path(self) -> Path:
        return self._log.path if self._log is not None else self.store.path_for(self.session.id)

    @property
    def messages(self) -> list[Message]:
        """What the model is sent."""
        return self.session.messages

    @property
    def history(self) -> list[Message]:
        """Every message of the session, summarised ones included."""
        return self.session.history

    # -- writing ------------------------------------------------------------------------

    def append(self, message: Message, record: ToolRecord | None = None) -> None:
        """Add one message to the history and to the file."""
        self.session.messages.append(message)
        self.session.history.append(message)
        if record is not None:
            self.session.tool_meta[str(message.get("tool_call_id"))] = record
        if self._log is None:
            self._create()  # the new file holds the whole history, this message included
        else:
            self._write([message_line(message, record)])

    def record_tool(self, call_id: str, record: ToolRecord, output: str) -> None:
        """A tool call's result and its row, in one line."""
        self.append({"role": "tool", "tool_call_id": call_id, "content": output}, record)

    def record_compaction(self, keep: int, drop: int, note: Message) -> None:
        """The model will be sent the first `keep` messages, `note`, then what follows the
        `drop` summarised ones; the session file keeps every message."""
        messages = self.session.messages
        self.session.messages = [*messages[:keep], note, *messages[keep + drop :]]
        self.session.history.append(note)
        self._write([{"type": "compact", "keep": keep, "drop": drop, "note": note}])

    def add_error(self, where: str, message: str) -> None:
        """An entry of the session's `errors` (SPEC §3, §5)."""
        error = self.session.add_error(where, message)
        self._write([{"type": "error", "error": error}])

    def end_with_error(self, where: str, message: str) -> TurnEnded:
        """A turn ends on a fault: the line goes to `errors`, to the person, and ends it.
        One line, bounded, whatever a server or a tool put in it."""
        message = one_line(message)
        self.add_error(where, message)
        self.sink(Notice("error", message))
        return TurnEnded("error", message)

    def set_model(self, name: str) -> None:
        self.session.model = name
        if self._log is not None:
            self._write([{"type": "model", "model": name}])

    def add_totals(self, summary: TurnSummary) -> None:
        """Add one turn's counters and tokens to the session's totals; the turn is synced."""
        counters = self.session.counters
        for kind in ToolKind:
            counters[kind.value] = counters.get(kind.value, 0) + summary.count(kind)
        counters["turns"] = counters.get("turns", 0) + 1
        usage = self.session.usage
        usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + summary.prompt_tokens
        usage["completion_tokens"] = usage.get("completion_tokens", 0) + summary.completion_tokens
        self._write([{"type": "totals", "counters": counters, "usage": usage}], sync=True)
        if self._log is not None:
            self.store.note(self.session)

    def _create(self) -> None:
        with self._lock:
            if self._closed:
                log.debug("session %s: closed, not created", self.session.id)
                return
            try:
                self._log = self.store.create(self.session)
            except OSError as exc:
                self._failed(exc)

    def _write(self, records: list[LogLine], *, sync: bool = False) -> None:
        """Append lines (and sync them: the end of a turn); a failure is said as a notice,
        never raised into the turn."""
        if self._log is None:
            self._create()  # the new file holds the whole session, these lines' news included
            return
        with self._lock:
            if self._closed or self._log is None:
                log.debug(
                    "session %s: closed, %d line(s) not written", self.session.id, len(records)
                )
                return
            try:
                self._log.append(records)
                if sync:
                    self._log.sync()
            except OSError as exc:
                self._failed(exc)

    def _failed(self, exc: OSError) -> None:
        log.debug("could not write session %s", self.session.id, exc_info=True)
        self.sink(Notice("error", f"could not save the session ({exc.strerror or exc})"))
