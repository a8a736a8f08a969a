"""A small index of sessions per project directory, so `--continue` and the session picker find
a directory's sessions without opening every session file.

One JSON Lines file per directory (`index/<hash of the directory>.jsonl`): each line is the
latest word on one session (id, directory, started, first message, messages, last update); a
reader keeps the last line per id. Lines are appended (one `write` on `O_APPEND`, under the
index's lock) and the file is rewritten whole, atomically, when it holds four times more lines
than sessions. A torn or unreadable line is skipped.

Sessions written before the index existed are found by one scan of the sessions directory, the
first time the index is used; `.built` marks that it was done.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mm_tui.agent.messages import Message
from mm_tui.agent.session_data import SessionError, read_v1
from mm_tui.agent.session_log import SUFFIX
from mm_tui.support.atomic_write import write_atomically

log = logging.getLogger(__name__)

FIRST_MESSAGE_CHARS = 200
REWRITE_FACTOR = 4
REWRITE_AFTER_BYTES = 64 * 1024


@dataclass(frozen=True)
class SessionInfo:
    """One session as the picker lists it; `size` is the file's bytes and `in_use` whether
    another process writes it, both read at listing (never written to the index)."""

    id: str
    cwd: str
    started: float
    first_message: str
    messages: int
    updated: float
    path: Path
    size: int = 0
    in_use: bool = False


def first_user_text(messages: list[Message]) -> str:
    """The first user message, on one line, cut for a list."""
    for message in messages:
        if message.get("role") == "user":
            text = " ".join(str(message.get("content") or "").split())
            return text[:FIRST_MESSAGE_CHARS]
    return ""


class SessionIndex:
    """The per-directory index files under `<sessions>/index/`."""

    def __init__(self, sessions: Path) -> None:
        self.sessions = sessions
        self.directory = sessions / "index"

    def file_for(self, cwd: str) -> Path:
        digest = hashlib.sha256(cwd.encode("utf-8", "surrogateescape")).hexdigest()[:20]
        return self.directory / f"{digest}.jsonl"

    def record(self, info: SessionInfo) -> None:
        """Say the latest about one session (a new one, or one whose turn just ended)."""
        line = _line(info)
        path = self.file_for(info.cwd)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            # One lock for the whole index, held for an append or a rewrite: a rewrite (which
            # replaces the file) never drops a line another process was appending.
            lock = os.open(self.directory / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(lock, fcntl.LOCK_EX)
                descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    os.write(descriptor, line)
                    size = os.fstat(descriptor).st_size
                finally:
                    os.close(descriptor)
                if size > REWRITE_AFTER_BYTES:
                    self._maybe_rewrite(path)
            finally:
                os.close(lock)  # releases the lock
        except OSError:  # the index is a cache: a session is never lost for it
            log.debug("could not update the session index %s", path, exc_info=True)

    def for_directory(self, cwd: str) -> list[SessionInfo]:
        """This directory's sessions, most recently updated first (files that still exist)."""
        self._build_once()
        found: list[SessionInfo] = []
        for info in self._read(self.file_for(cwd)).values():
            if info.cwd != cwd:
                continue  # a hash collision: not this directory's
            try:
                size = (self.sessions / info.path.name).stat().st_size
            except OSError:
                continue  # deleted, or converted under another name
            found.append(_with(info, size, self.sessions))
        return sorted(found, key=lambda i: i.updated, reverse=True)

    def everywhere(self) -> list[SessionInfo]:
        """Every directory's sessions, most recently updated first."""
        self._build_once()
        cwds = {
            info.cwd
            for path in self.directory.glob("*.jsonl")
            for info in self._read(path).values()
        }
        found = [info for cwd in cwds for info in self.for_directory(cwd)]
        return sorted(found, key=lambda i: i.updated, reverse=True)

    # -- reading, rewriting ----------------------------------------------------------------

    def _read(self, path: Path) -> dict[str, SessionInfo]:
        try:
            data = path.read_bytes()
        except OSError:
            return {}
        latest: dict[str, SessionInfo] = {}
        for raw in data.split(b"\n"):
            if not raw.strip():
                continue
            try:
                item = json.loads(raw)
                info = SessionInfo(
                    id=str(item["id"]),
                    cwd=str(item["cwd"]),
                    started=float(item["started"]),
                    first_message=str(item.get("first_message") or ""),
                    messages=int(item.get("messages") or 0),
                    updated=float(item.get("updated") or 0.0),
                    path=Path(str(item["path"])),
                )
            except (ValueError, TypeError, KeyError):
                log.debug("skipping an index line of %s: %r", path, raw[:80], exc_info=True)
                continue
            latest[info.id] = info
        return latest

    def _maybe_rewrite(self, path: Path) -> None:
        lines = path.read_bytes().count(b"\n")
        latest = self._read(path)
        if lines <= REWRITE_FACTOR * max(len(latest), 1):
            return
        body = b"".join(_line(info) for info in latest.values())
        write_atomically(path, body, new_file_mode=0o600)

    def _build_once(self) -> None:
        """Index the sessions written before the index existed (one scan, ever)."""
        marker = self.directory / ".built"
        if marker.exists():
            return
        started = time.monotonic()
        by_cwd: dict[str, list[SessionInfo]] = {}
        for info in scan_sessions(self.sessions):
            by_cwd.setdefault(info.cwd, []).append(info)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            for cwd, infos in by_cwd.items():
                path = self.file_for(cwd)
                known = self._read(path)
                fresh = [info for info in infos if info.id not in known]
                if fresh:
                    with path.open("ab") as handle:
                        handle.write(b"".join(_line(info) for info in fresh))
            marker.write_text("2\n", encoding="utf-8")
        except OSError:
            log.debug("could not build the session index", exc_info=True)
        log.debug("session index built in %.3fs", time.monotonic() - started)


def _line(info: SessionInfo) -> bytes:
    data = asdict(info)
    data["path"] = info.path.name
    data.pop("size")
    data.pop("in_use")
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def _with(info: SessionInfo, size: int, sessions: Path) -> SessionInfo:
    return SessionInfo(
        info.id,
        info.cwd,
        info.started,
        info.first_message,
        info.messages,
        info.updated,
        sessions / info.path.name,
        size,
    )


# -- the one scan of files written before the index ----------------------------------------


def scan_sessions(directory: Path) -> Iterator[SessionInfo]:
    """Every readable session file of `directory`; unreadable ones are skipped (logged)."""
    if not directory.is_dir():
        return
    for path in sorted(directory.iterdir()):
        try:
            if path.suffix == SUFFIX:
                yield _scan_log(path)
            elif path.suffix == ".json" and not path.with_suffix(SUFFIX).exists():
                yield _scan_v1(path)
        except (OSError, ValueError, SessionError, KeyError, TypeError):
            log.debug("not indexing %s", path, exc_info=True)


def _scan_v1(path: Path) -> SessionInfo:
    session = read_v1(path)
    return SessionInfo(
        id=session.id,
        cwd=session.cwd,
        started=session.created,
        first_message=first_user_text(session.history),
        messages=len(session.history),
        updated=path.stat().st_mtime,
        path=path,
    )


def _scan_log(path: Path) -> SessionInfo:
    with path.open("rb") as handle:
        header: dict[str, Any] = json.loads(handle.readline())
        count = 0
        first = ""
        for raw in handle:
            if b'"type":"message"' not in raw[:40]:
                continue
            count += 1
            if not first and b'"role":"user"' in raw[:200]:
                first = _first_text(raw, path)
    return SessionInfo(
        id=str(header["id"]),
        cwd=str(header["cwd"]),
        started=float(header.get("created") or 0.0),
        first_message=first,
        messages=count,
        updated=path.stat().st_mtime,
        path=path,
    )


def _first_text(raw: bytes, path: Path) -> str:
    """The first user message of a line, for a list: a long line is not parsed whole, its
    content's opening is decoded instead (a label needs 200 characters, not a megabyte)."""
    if len(raw) > 64 * 1024:
        start = raw.find(b'"content":"')
        if start >= 0:
            opening = raw[start + 11 : start + 11 + 4 * FIRST_MESSAGE_CHARS]
            cut = opening.rfind(b"\\", len(opening) - 6)  # an escape cut in half is dropped
            if cut >= 0:
                opening = opening[:cut]
            try:
                text = json.loads(b'"' + opening + b'"')
            except ValueError:
                text = opening.decode("utf-8", "replace")
            return first_user_text([{"role": "user", "content": str(text)}])
    try:
        return first_user_text([json.loads(raw)["message"]])
    except (ValueError, KeyError, TypeError):
        log.debug("unreadable line in %s", path, exc_info=True)
        return ""
