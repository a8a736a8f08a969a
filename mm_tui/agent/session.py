"""Where sessions live and how they are found, opened, forked and listed (SPEC §8).

Sessions are append-only logs under `$XDG_DATA_HOME/mm/sessions/` (see `session_log` for the
format and why). One process writes a session at a time: it holds the file's lock; a session
another process holds is opened read-only, or forked into a new one. Version-1 JSON files are
still read, and converted to a log when opened for writing. A per-directory index
(`session_index`) finds a directory's sessions without opening the others.

The API key is never part of a session: nothing here receives it.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mm_tui.agent.session_data import (
    UNFINISHED_RESULT,
    Session,
    SessionError,
    answer_unfinished_calls,
    new_session_id,
    read_v1,
)
from mm_tui.agent.session_index import SessionIndex, SessionInfo, first_user_text
from mm_tui.agent.session_log import (
    SUFFIX,
    SessionBusy,
    SessionLog,
    create_log,
    header,
    read_log,
    whole_log,
    written_elsewhere,
)
from mm_tui.support.atomic_write import write_atomically
from mm_tui.support.paths import data_dir

__all__ = [
    "UNFINISHED_RESULT",
    "OpenedSession",
    "Session",
    "SessionBusy",
    "SessionError",
    "SessionInfo",
    "SessionStore",
    "answer_unfinished_calls",
    "new_session_id",
    "read_session_document",
    "sessions_dir",
]

log = logging.getLogger(__name__)

CONVERTED = "session {id} was converted from a version-1 file to the append-only log"


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$XDG_DATA_HOME/mm/sessions` (SPEC §8)."""
    return data_dir(env) / "sessions"


@dataclass
class OpenedSession:
    """A session read back: `log` is its writer (None when opened read-only); `notices` are
    lines for the person (a torn last line, a conversion); `unfinished` counts tool calls
    that had no result (mm-tui was stopped mid-call) and were answered."""

    session: Session
    log: SessionLog | None
    notices: list[str] = field(default_factory=list)
    unfinished: int = 0


class SessionStore:
    """The sessions of one directory of session files."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or sessions_dir()
        self.index = SessionIndex(self.directory)

    def path_for(self, session_id: str) -> Path:
        return self.directory / f"{Path(session_id).name}{SUFFIX}"

    def locate(self, session: str) -> Path:
        """The file of an id (the log, else a v1 `.json`), or a path given as is."""
        if session.endswith((SUFFIX, ".json")):
            return Path(session)
        path = self.path_for(session)
        legacy = path.with_suffix(".json")
        return legacy if not path.exists() and legacy.exists() else path

    # -- reading ------------------------------------------------------------------------

    def read(self, session: str) -> OpenedSession:
        """Read a session without writing anything (replay, export, a busy session)."""
        path = self.locate(session)
        if path.suffix == ".json":
            loaded = read_v1(path)
            return OpenedSession(loaded, None, [], answer_unfinished_calls(loaded.messages))
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise SessionError(f"no session file {path}") from None
        except OSError as exc:
            raise SessionError(f"session file {path} is unreadable ({exc.strerror})") from None
        reading = read_log(data, path)
        return OpenedSession(reading.session, None, reading.notices, reading.unfinished)

    def load(self, session: str) -> Session:
        """The session, read-only."""
        return self.read(session).session

    def open(self, session: str) -> OpenedSession:
        """Open a session to go on with it: its lock taken, a torn tail cut, a v1 file
        converted. Raises SessionBusy when another process writes it, SessionError when it
        cannot be used (the file is then left as it is)."""
        path = self.locate(session)
        notices: list[str] = []
        if path.suffix == ".json":
            path = self._convert(path)
            notices.append(CONVERTED.format(id=path.stem))
        try:
            writer = SessionLog.acquire(path, create=False)
        except FileNotFoundError:
            raise SessionError(f"no session file {path}") from None
        except OSError as exc:
            raise SessionError(f"session file {path} cannot be opened ({exc.strerror})") from None
        try:
            reading = read_log(writer.read(), path)
            writer.cut_to(reading.good_length)
        except BaseException:
            writer.close()
            raise
        return OpenedSession(reading.session, writer, notices + reading.notices, reading.unfinished)

    def fork(self, session: str) -> OpenedSession:
        """A new session holding a copy of `session` (every line, compaction markers too),
        open for writing; the original is not touched."""
        path = self.locate(session)
        if path.suffix == ".json":
            source = read_v1(path)
            body = whole_log(source).split(b"\n", 1)[1]
        else:
            data = self.read(session)  # checks the file; a torn tail is left out below
            raw = path.read_bytes()
            body = raw[: raw.rfind(b"\n") + 1].split(b"\n", 1)[1]
            source = data.session
        copy = Session(
            id=new_session_id(),
            model=source.model,
            base_url=source.base_url,
            cwd=source.cwd,
            forked_from=source.id,
        )
        target = self.path_for(copy.id)
        writer = SessionLog.acquire(target, create=True)
        writer.append([header(copy)])
        writer.append_raw(body)
        writer.sync()
        reading = read_log(writer.read(), target)
        self.note(reading.session)
        return OpenedSession(reading.session, writer, reading.notices, reading.unfinished)

    def create(self, session: Session) -> SessionLog:
        """The file of a new session, holding what it has so far; locked."""
        writer = create_log(self.path_for(session.id), session)
        self.note(session)
        return writer

    # -- finding ------------------------------------------------------------------------

    def latest_for(self, cwd: Path) -> SessionInfo | None:
        """The most recently updated session of `cwd` (for --continue), from the index."""
        found = self.index.for_directory(str(cwd))
        return found[0] if found else None

    def list_sessions(self, cwd: Path | None = None) -> list[SessionInfo]:
        """Sessions of `cwd` (every directory's when None), most recent first: for a picker,
        each marked when a process writes it now."""
        found = self.index.for_directory(str(cwd)) if cwd is not None else self.index.everywhere()
        return [
            replace(info, in_use=True) if written_elsewhere(info.path) else info for info in found
        ]

    def note(self, session: Session) -> None:
        """Tell the index the latest about `session` (created, a turn ended, closed)."""
        self.index.record(
            SessionInfo(
                id=session.id,
                cwd=session.cwd,
                started=session.created,
                first_message=first_user_text(session.history),
                messages=len(session.history),
                updated=time.time(),
                path=self.path_for(session.id),
            )
        )

    # -- v1 -------------------------------------------------------------------------------

    def _convert(self, legacy: Path) -> Path:
        """A v1 file rewritten as a log in the sessions directory (durably); the v1 file is
        then removed from there (one given by path from elsewhere is kept)."""
        loaded = read_v1(legacy)  # raises SessionError, leaving the file as it is
        target = self.path_for(loaded.id if loaded.id == legacy.stem else legacy.stem)
        if not target.exists():
            loaded.id = target.stem
            write_atomically(target, whole_log(loaded), durable=True, new_file_mode=0o600)
            self.note(loaded)
        if legacy.parent.resolve() == self.directory.resolve():
            legacy.unlink(missing_ok=True)  # a file given by path elsewhere is left alone
        return target


def read_session_document(path: Path) -> dict[str, Any]:
    """A session file of any version as one v1-shaped document with its whole history:
    what `--replay` and `/export` read. Raises SessionError."""
    if path.suffix != SUFFIX:
        try:
            document: Any = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SessionError(f"session file {path} is unreadable or corrupt ({exc})") from None
        if not isinstance(document, dict):
            raise SessionError(f"session file {path} is corrupt (not an object)")
        return document
    store = SessionStore(path.parent)
    return store.read(str(path)).session.to_json()
