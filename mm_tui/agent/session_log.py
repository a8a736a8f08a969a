"""The session file (SPEC §8): an append-only JSON Lines log, one line per event.

Why JSON Lines and not SQLite: a line costs the same to append at message 10 and at message
10,000; a crash can only tear the last line, which a reader sees (no newline, or not JSON) and
ignores; the file stays a transcript a person can read with `less` or `jq`, as Codex's and
Claude Code's are; copying lines is a fork. SQLite in WAL mode would buy transactions we do not
need (one writer per session, enforced by a lock) at the price of an opaque file.

Durability: each line goes out in one `write()` on an `O_APPEND` descriptor, so once `append`
returns the line survives mm-tui being killed (SIGKILL included): it is the kernel's. An
`fsync` makes it survive a power cut too; it costs 1.3 to 9 ms on the disks we measured, more
than the whole 1 ms budget of an append, so the log is synced at the end of every turn, at
close, and when created — a power cut loses at most the turn that was running.

Lines: `session` (the header, first), `message` (with `tool`, the row, for a tool result),
`compact` (a summary marker: the model is sent `keep` messages, the note, then what followed
the `drop` summarised ones — nothing is deleted), `error`, `model`, `totals`.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal, NotRequired, TypedDict

from mm_tui.agent.messages import Message, read_back
from mm_tui.agent.session_data import (
    ErrorEntry,
    Session,
    SessionError,
    answer_unfinished_calls,
    read_back_error,
)
from mm_tui.agent.tool_record import ToolRecord
from mm_tui.support.atomic_write import sync_directory

log = logging.getLogger(__name__)

VERSION = 2
SUFFIX = ".jsonl"
TORN_LAST_LINE = "the last line of session {id} was cut by a crash while it was written — ignored"
BAD_LINES = "{n} unreadable line(s) of session {id} skipped"


class SessionBusy(Exception):
    """Another process writes this session (it holds the lock)."""


class HeaderLine(TypedDict):
    type: Literal["session"]
    version: int
    id: str
    model: str
    base_url: str
    cwd: str
    created: float
    forked_from: NotRequired[str]


class MessageLine(TypedDict):
    type: Literal["message"]
    message: Message
    tool: NotRequired[dict[str, Any]]  # its row (`ToolRecord.to_json`)


class CompactLine(TypedDict):
    type: Literal["compact"]
    keep: int
    drop: int
    note: Message


class ErrorLine(TypedDict):
    type: Literal["error"]
    error: ErrorEntry


class ModelLine(TypedDict):
    type: Literal["model"]
    model: str


class TotalsLine(TypedDict):
    type: Literal["totals"]
    counters: dict[str, int]
    usage: dict[str, int]


#: One line of a session file, as written (read back, a line is checked by `_apply`).
LogLine = HeaderLine | MessageLine | CompactLine | ErrorLine | ModelLine | TotalsLine


def encode(record: LogLine) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def header(session: Session) -> HeaderLine:
    record: HeaderLine = {
        "type": "session",
        "version": VERSION,
        "id": session.id,
        "model": session.model,
        "base_url": session.base_url,
        "cwd": session.cwd,
        "created": session.created,
    }
    if session.forked_from:
        record["forked_from"] = session.forked_from
    return record


def message_line(message: Message, record: ToolRecord | None = None) -> MessageLine:
    line: MessageLine = {"type": "message", "message": message}
    if record is not None:
        line["tool"] = record.to_json()
    return line


def whole_log(session: Session) -> bytes:
    """Every line of a session (v1 conversion, fork): its history, errors and totals."""
    lines: list[LogLine] = [header(session)]
    for message in session.history:
        call_id = message.get("tool_call_id") if message.get("role") == "tool" else None
        lines.append(message_line(message, session.tool_meta.get(str(call_id or ""))))
    if session.messages != session.history:  # a v1 file is never compacted in this sense
        log.debug("session %s: context differs from history at conversion", session.id)
    lines += [ErrorLine(type="error", error=error) for error in session.errors]
    if session.counters:  # a session that has not finished a turn has none yet
        lines.append(TotalsLine(type="totals", counters=session.counters, usage=session.usage))
    return b"".join(encode(line) for line in lines)


@dataclass
class LogReading:
    """A log read back: the session, the notices to say, and the length of its whole lines
    (where a writer resumes, dropping a torn tail)."""

    session: Session
    notices: list[str] = field(default_factory=list)
    good_length: int = 0
    unfinished: int = 0


def read_log(data: bytes, path: Path) -> LogReading:
    """Rebuild a session from its lines; a torn last line or an unreadable line is skipped
    and said, never fatal."""
    complete_end = data.rfind(b"\n") + 1
    torn = bool(data[complete_end:].strip())
    lines = data[:complete_end].split(b"\n")[:-1]
    if not lines:
        raise SessionError(f"session file {path} is empty or was cut before its first line")
    try:
        first = json.loads(lines[0])
    except ValueError:
        raise SessionError(f"session file {path} is corrupt (no header line)") from None
    if not isinstance(first, dict) or first.get("type") != "session":
        raise SessionError(f"session file {path} is corrupt (no header line)")
    version = first.get("version")
    if not isinstance(version, int) or version > VERSION:
        raise SessionError(
            f"session file {path} is version {version!r}, newer than this mm-tui "
            f"understands ({VERSION}); upgrade mm-tui to resume it"
        )
    session = Session(
        id=str(first.get("id") or path.stem),
        model=str(first.get("model") or ""),
        base_url=str(first.get("base_url") or ""),
        cwd=str(first.get("cwd") or ""),
        created=float(first.get("created") or 0.0),
        forked_from=str(first.get("forked_from") or ""),
    )
    bad = 0
    for raw in lines[1:]:
        try:
            record = json.loads(raw)
            _apply(session, record)
        except (ValueError, TypeError, KeyError, AttributeError):
            log.debug("session %s: skipping line %r", session.id, raw[:80], exc_info=True)
            bad += 1
    reading = LogReading(session, good_length=complete_end)
    reading.unfinished = answer_unfinished_calls(session.messages)
    if bad:
        reading.notices.append(BAD_LINES.format(n=bad, id=session.id))
    if torn:
        reading.notices.append(TORN_LAST_LINE.format(id=session.id))
    return reading


def _apply(session: Session, record: dict[str, Any]) -> None:
    kind = record["type"]
    if kind == "message":
        if not isinstance(record["message"], dict):
            raise TypeError("a message is not an object")
        message = read_back(record["message"])
        session.messages.append(message)
        session.history.append(message)
        if "tool" in record:
            session.tool_meta[str(message.get("tool_call_id"))] = ToolRecord.from_json(
                record["tool"]
            )
    elif kind == "compact":
        # The live process compacted the history it was sending, unfinished calls answered.
        answer_unfinished_calls(session.messages)
        keep, drop, note = int(record["keep"]), int(record["drop"]), record["note"]
        session.messages[:] = [*session.messages[:keep], note, *session.messages[keep + drop :]]
        session.history.append(note)
    elif kind == "error":
        session.errors.append(read_back_error(dict(record["error"])))
    elif kind == "model":
        session.model = str(record["model"])
    elif kind == "totals":
        session.counters = dict(record["counters"])
        session.usage = dict(record["usage"])
    else:
        log.debug("session %s: unknown line type %r kept out", session.id, kind)


class SessionLog:
    """The one writer of a session file: holds its lock for as long as it is open."""

    def __init__(self, handle: IO[bytes], path: Path) -> None:
        self._handle = handle
        self.path = path

    @classmethod
    def acquire(cls, path: Path, *, create: bool) -> SessionLog:
        """Open `path` for appending under an exclusive lock; SessionBusy when another
        process holds it. `create`: the file must not exist yet."""
        flags = os.O_RDWR | os.O_APPEND | os.O_CLOEXEC | (os.O_CREAT | os.O_EXCL if create else 0)
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, flags, 0o600)
        handle = os.fdopen(descriptor, "r+b", buffering=0)
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise SessionBusy(str(path)) from None
        except BaseException:
            handle.close()
            raise
        return cls(handle, path)

    def read(self) -> bytes:
        """The file as it is now (read under the lock, so no writer is midway)."""
        self._handle.seek(0)
        return self._handle.read()

    def cut_to(self, length: int) -> None:
        """Drop a torn tail so the next line starts on a line of its own."""
        if os.fstat(self._handle.fileno()).st_size > length:
            os.ftruncate(self._handle.fileno(), length)

    def append(self, records: Iterable[LogLine]) -> None:
        """Append whole lines in one write (SIGKILL-safe once this returns)."""
        self.append_raw(b"".join(encode(record) for record in records))

    def append_raw(self, data: bytes) -> None:
        """Append lines already encoded (a fork's copy)."""
        view = memoryview(data)
        while view:
            written = self._handle.write(view)
            view = view[written or 0 :]

    def sync(self) -> None:
        """Make what was appended survive a power cut (end of a turn, close)."""
        os.fsync(self._handle.fileno())

    @property
    def size(self) -> int:
        return os.fstat(self._handle.fileno()).st_size

    def close(self) -> None:
        if self._handle.closed:
            return
        try:
            self.sync()
        except OSError:
            log.debug("could not sync %s at close", self.path, exc_info=True)
        self._handle.close()  # releases the lock


def written_elsewhere(path: Path) -> bool:
    """Whether a process holds the session's write lock now (the session picker marks it: it
    would open as a copy). A shared lock is tried and released at once; our own open session
    counts too (its lock is on another descriptor)."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        log.debug("could not probe the lock of %s", path, exc_info=True)
        return False
    finally:
        os.close(descriptor)  # releases the shared lock
    return False


def create_log(path: Path, session: Session) -> SessionLog:
    """A new session file holding `session` whole, locked, synced with its directory entry."""
    writer = SessionLog.acquire(path, create=True)
    writer.append_raw(whole_log(session))
    writer.sync()
    sync_directory(path.parent)
    return writer
