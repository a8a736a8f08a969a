"""Sessions that scale: the append-only session log against the old whole-file
rewrite, and the per-directory index against parsing every session file.

Run `python -m bench.bench_sessions`. Aims: appending a 10 KB message at message 1,000 costs at
most 1.5× what it costs at message 10, and under 1 ms; `--continue` among 200 sessions of 1 MB
in other directories under 50 ms; opening a 10,000-message session for replay under 1 s.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.measure import median_ms, print_rows, row
from mm_tui.agent.conversation import Conversation
from mm_tui.agent.session import SessionStore, read_session_document
from mm_tui.agent.session_data import Session
from mm_tui.agent.session_log import message_line
from mm_tui.replay import Pace, load_replay
from mm_tui.support.atomic_write import write_atomically

MESSAGE_CHARS = 10_000
OTHER_SESSIONS = 200
OTHER_SESSION_BYTES = 1_000_000
REPLAY_MESSAGES = 10_000
APPENDS = 50


def _message(n: int, chars: int = MESSAGE_CHARS) -> dict[str, Any]:
    role = ("user", "assistant")[n % 2]
    return {"role": role, "content": f"message {n} " + "x" * chars}


def _conversation(folder: Path, messages: int) -> Conversation:
    store = SessionStore(folder)
    session_id = f"s{messages}-{os.urandom(3).hex()}"

    def fresh() -> Session:
        return Session(id=session_id, model="m", base_url="u", cwd=str(folder))

    conversation = Conversation(store, lambda event: None, fresh)
    for n in range(messages):
        conversation.append(_message(n))
    return conversation


def _append_ms(conversation: Conversation) -> float:
    """The median time of one more 10 KB message appended (the turn loop's call)."""
    counter = iter(range(10**9))
    return median_ms(lambda: conversation.append(_message(next(counter))), APPENDS)


def _v1_save_ms(folder: Path, messages: int) -> float:
    """What a save cost before: the whole file rewritten, with fsync, after each message."""
    session = Session(
        id="v1",
        model="m",
        base_url="u",
        cwd=str(folder),
        messages=[_message(n) for n in range(messages)],
    )
    path = folder / "v1.json"

    def save() -> None:
        text = json.dumps(session.to_json(), ensure_ascii=False, indent=1)
        write_atomically(path, text.encode(), durable=True)

    return median_ms(save, 5)


def _fsync_append_ms(folder: Path) -> float:
    """The alternative the log's docstring weighs: one fsync per appended message."""
    session = Session(id="fsync", model="m", base_url="u", cwd=str(folder))
    writer = SessionStore(folder).create(session)
    counter = iter(range(10**9))

    def append_and_sync() -> None:
        writer.append([message_line(_message(next(counter)))])
        writer.sync()

    try:
        return median_ms(append_and_sync, APPENDS)
    finally:
        writer.close()


def bench_append(folder: Path) -> list[dict[str, Any]]:
    small = _conversation(folder / "a", 10)
    large = _conversation(folder / "b", 1_000)
    at_10, at_1000 = _append_ms(small), _append_ms(large)
    small.close()
    large.close()
    old = _v1_save_ms(folder / "c", 1_000)
    durable = _fsync_append_ms(folder / "d")
    return [
        row("append with an fsync per message (not chosen) vs without", durable, at_1000),
        row(
            "append a 10 KB message at message 1,000 vs at message 10",
            at_1000,
            at_10,
            max_ratio=1.5,
        ),
        row("append a 10 KB message at message 1,000 vs 1 ms", at_1000, 1.0, max_value=1.0),
        row("append at message 1,000 vs the v1 whole-file save (fsync)", at_1000, old),
    ]


def _fill_other_directories(store: SessionStore) -> None:
    body = "y" * OTHER_SESSION_BYTES
    for n in range(OTHER_SESSIONS):
        session = Session(
            id=f"other-{n:03d}",
            model="m",
            base_url="u",
            cwd=f"/elsewhere/project-{n}",
            messages=[{"role": "system", "content": "s"}, {"role": "user", "content": body}],
        )
        store.create(session).close()


def bench_continue(folder: Path) -> list[dict[str, Any]]:
    store = SessionStore(folder / "sessions")
    _fill_other_directories(store)
    here = folder / "here"
    mine = Session(
        id="mine",
        model="m",
        base_url="u",
        cwd=str(here),
        messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}],
    )
    store.create(mine).close()
    store.list_sessions(here)  # the one-time scan of pre-index files happens here, not below

    def continue_here() -> None:
        latest = SessionStore(folder / "sessions").latest_for(here)
        assert latest is not None and latest.id == "mine"
        opened = store.open(latest.id)
        assert opened.log is not None
        opened.log.close()

    def parse_every_file() -> None:  # how --continue found this directory's session before
        for path in sorted(store.directory.glob("*.jsonl")):
            for line in path.read_bytes().splitlines():
                json.loads(line)

    started = time.perf_counter()
    (folder / "sessions" / "index" / ".built").unlink()
    store.list_sessions(here)
    scan = (time.perf_counter() - started) * 1000
    return [
        row(
            "--continue among 200 sessions of 1 MB elsewhere vs 50 ms",
            median_ms(continue_here, 15),
            50.0,
            max_value=50.0,
        ),
        row(
            "--continue among 200 sessions of 1 MB elsewhere vs parsing every file",
            median_ms(continue_here, 15),
            median_ms(parse_every_file, 3),
        ),
        row("one-time index of 200 sessions written before the index vs 1 s", scan, 1000.0),
    ]


def bench_replay(folder: Path) -> list[dict[str, Any]]:
    store = SessionStore(folder)
    session = Session(
        id="long",
        model="m",
        base_url="u",
        cwd=str(folder),
        messages=[{"role": "system", "content": "s"}]
        + [_message(n, 500) for n in range(REPLAY_MESSAGES)],
    )
    store.create(session).close()
    path = store.path_for("long")

    def open_for_replay() -> None:  # what --replay and /export read: every message
        document = read_session_document(path)
        assert len(document["messages"]) == REPLAY_MESSAGES + 1

    def replay_opened() -> None:  # --replay: the file read, its first event made to play
        replay, _ = load_replay(path)
        next(iter(replay))

    def every_event() -> None:  # all 6-char deltas made (at its pace they are made as played)
        replay, _ = load_replay(path, Pace(speed=0))
        assert sum(1 for _ in replay) > REPLAY_MESSAGES

    def read_lines() -> None:
        for line in path.read_bytes().splitlines():
            json.loads(line)

    opened = median_ms(open_for_replay, 3)
    return [
        row("open a 10,000-message session for replay vs 1 s", opened, 1000.0, max_value=1000.0),
        row("open a 10,000-message session for replay vs reading its lines", opened,
            median_ms(read_lines, 3)),
        row("--replay of 10,000 messages, opened to its first event vs 1 s",
            median_ms(replay_opened, 3), 1000.0, max_value=1000.0),
        row("--replay: every event of 10,000 messages made (6-char deltas) vs opening the session",
            median_ms(every_event, 3), opened),
    ]  # fmt: skip


def run() -> list[dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = bench_append(folder / "append")
        rows += bench_continue(folder / "continue")
        rows += bench_replay(folder / "replay")
    return rows


if __name__ == "__main__":
    print_rows(run())
