"""`/resume`'s session picker: this directory's sessions listed (date, first message,
messages, size), one opened with its conversation shown; a session another mm-tui writes opens
as a copy; no session, a corrupt or torn file, thousands of sessions.

Pilot tests against the real Agent and the scripted server; sessions on disk in the test's own
`XDG_DATA_HOME` (tests/window/conftest.py).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.session import SessionStore, sessions_dir
from mm_tui.agent.session_index import SessionInfo
from mm_tui.app import MMApp
from mm_tui.widgets.blocks import NoticeLine, UserMessage
from mm_tui.widgets.session_picker import SessionPicker, human_size, session_line
from scripted_server import Reply
from tests.window.conftest import send, settle, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


def notices(app: MMApp) -> list[str]:
    return [line.text for line in app.query(NoticeLine)]


def said_users(app: MMApp) -> list[str]:
    return [message.text for message in app.query(UserMessage)]


def earlier_session(model_server: Any, project: Path, text: str) -> str:
    """A finished session of one turn in `project`, written by another Agent (closed)."""
    model_server.enqueue(Reply(text=f"answer to {text}"))
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())
    agent = Agent(config, lambda _: None, project, retry_delays=())
    agent.run_turn(text)
    agent.close()
    return agent.session.id


async def open_picker(pilot: Any) -> SessionPicker:
    app = pilot.app
    await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
    await send(pilot, "/resume")
    await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "the picker opens")
    screen = app.screen
    assert isinstance(screen, SessionPicker)
    note = screen.query_one("#session-note")
    await wait_for(pilot, lambda: bool(str(note.render())), "the sessions are listed")
    return screen


def shown_ids(picker: SessionPicker) -> list[str | None]:
    options = picker.query_one("#session-list")
    return [options.get_option_at_index(i).id for i in range(options.option_count)]  # type: ignore[attr-defined]


def shown(picker: SessionPicker) -> list[str]:
    options = picker.query_one("#session-list")
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]  # type: ignore[attr-defined]


async def test_resume_lists_this_directorys_sessions_and_opens_one_with_its_conversation(
    model_server: Any, live_app: Any, project: Path, tmp_path: Path
) -> None:
    first = earlier_session(model_server, project, "first task: fix the greeting")
    time.sleep(0.01)  # `updated` orders the list
    second = earlier_session(model_server, project, "second task: add a test")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    earlier_session(model_server, elsewhere, "another project's task")
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        picker = await open_picker(pilot)
        rows = shown(picker)
        assert shown_ids(picker) == [second, first]  # only this directory's, newest first
        assert re.fullmatch(
            r"\d{4}-\d\d-\d\d \d\d:\d\d +3 msg +[\d.]+ k?B  second task: add a test", rows[0]
        )
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: "first task: fix the greeting" in said_users(app), "shown")
        assert said_users(app) == ["first task: fix the greeting"]  # the transcript is that one
        opened = f"opened session {first} (3 messages)"  # said once the past is mounted
        await wait_for(pilot, lambda: opened in notices(app), "the opened line")
        assert app.turns.port is not None and app.turns.port.session_id() == first
        model_server.enqueue(Reply(text="Going on."))
        await send(pilot, "and now?")
        await wait_for(pilot, turn_over(app), "the turn ends")
        sent = [m["content"] for m in model_server.requests[-1]["messages"] if m["role"] == "user"]
        assert sent == ["first task: fix the greeting", "and now?"]


async def test_typing_narrows_the_list_and_esc_stays_where_one_was(
    model_server: Any, live_app: Any, project: Path
) -> None:
    earlier_session(model_server, project, "refactor the parser")
    earlier_session(model_server, project, "write the docs")
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        picker = await open_picker(pilot)
        await pilot.press(*"docs")
        await wait_for(pilot, lambda: len(shown(picker)) == 1, "one session matches")
        assert "write the docs" in shown(picker)[0]
        await pilot.press(*"zzz")
        await wait_for(pilot, lambda: not shown(picker), "nothing matches")
        assert str(picker.query_one("#session-note").render()) == "no session matches"
        await pilot.press("enter")  # nothing highlighted: nothing happens
        assert isinstance(app.screen, SessionPicker)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, SessionPicker)
        assert app.turns.port is not None
        assert not said_users(app)


async def test_no_earlier_session_is_said_in_one_line(live_app: Any, project: Path) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await send(pilot, "/resume")
        line = f"/resume: no earlier session in {project.resolve()}"
        await wait_for(pilot, lambda: line in notices(app), "the line")
        assert not isinstance(app.screen, SessionPicker)


async def test_a_session_another_mm_tui_writes_is_marked_and_opens_as_a_copy(
    model_server: Any, live_app: Any, project: Path
) -> None:
    busy = earlier_session(model_server, project, "a task running elsewhere")
    path = sessions_dir() / f"{busy}.jsonl"
    holder = subprocess.Popen(  # another process holding the write lock, as a running mm-tui
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time\n"
            "f = open(sys.argv[1], 'ab')\n"
            "fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('locked', flush=True)\n"
            "time.sleep(120)\n",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        app = live_app()
        async with app.run_test(size=(120, 30)) as pilot:
            picker = await open_picker(pilot)
            [row] = shown(picker)
            assert "⚠ in use elsewhere: opens a copy · a task running elsewhere" in row
            await pilot.press("enter")
            await wait_for(pilot, lambda: bool(said_users(app)), "the conversation is shown")
            port = app.turns.port
            assert port is not None and port.session_id() != busy
            in_use = (
                f"session {busy} is in use by another mm-tui — it was left as it is; "
                f"this one goes on in a copy, session {port.session_id()}"
            )
            await wait_for(pilot, lambda: in_use in notices(app), "the in-use line")
            assert said_users(app) == ["a task running elsewhere"]
    finally:
        holder.kill()
        holder.wait()


async def test_ctrl_f_goes_on_in_a_copy(model_server: Any, live_app: Any, project: Path) -> None:
    original = earlier_session(model_server, project, "keep this one as it is")
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await open_picker(pilot)
        await pilot.press("ctrl+f")
        await wait_for(pilot, lambda: bool(said_users(app)), "the copy's conversation is shown")
        port = app.turns.port
        assert port is not None and port.session_id() != original
        forked = f"forked session {original} (3 messages) as {port.session_id()}"
        await wait_for(pilot, lambda: forked in notices(app), "the forked line")


async def test_a_corrupt_session_in_the_list_is_said_and_nothing_changes(
    model_server: Any, live_app: Any, project: Path
) -> None:
    broken = earlier_session(model_server, project, "this file will break")
    (sessions_dir() / f"{broken}.jsonl").write_bytes(b"\x00\xff not a session at all\n")
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        model_server.enqueue(Reply(text="Hello."))
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await send(pilot, "hello")
        await wait_for(pilot, turn_over(app), "a turn in this session")
        port = app.turns.port
        assert port is not None
        current = port.session_id()
        picker = await open_picker(pilot)
        assert len(shown(picker)) == 2 and "◀ this session · hello" in shown(picker)[0]
        await pilot.press("down", "enter")
        await wait_for(pilot, lambda: any("staying in this session" in n for n in notices(app)), "")
        assert port.session_id() == current
        assert said_users(app) == ["hello"]  # the transcript was kept


async def test_a_torn_last_line_opens_with_a_warning(
    model_server: Any, live_app: Any, project: Path
) -> None:
    torn = earlier_session(model_server, project, "cut mid-write")
    with (sessions_dir() / f"{torn}.jsonl").open("ab") as handle:
        handle.write(b'{"type":"message","message":{"role":"user","content":"half')
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        await open_picker(pilot)
        await pilot.press("enter")
        await wait_for(pilot, lambda: said_users(app) == ["cut mid-write"], "it is shown")
        line = f"the last line of session {torn} was cut by a crash while it was written — ignored"
        assert line in notices(app)


async def test_thousands_of_sessions_show_the_newest_and_typing_finds_any(
    live_app: Any, project: Path
) -> None:
    store = SessionStore()
    cwd = str(project.resolve())
    lines = []
    for n in range(3000):
        path = store.path_for(f"s{n:04}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        entry = {"id": f"s{n:04}", "cwd": cwd, "started": n, "first_message": f"task number {n}"}
        lines.append(json.dumps({**entry, "messages": 3, "updated": 1e9 + n, "path": path.name}))
    index = store.index.file_for(cwd)  # the index as 3,000 sessions leave it
    index.parent.mkdir(parents=True, exist_ok=True)
    index.write_text("\n".join(lines) + "\n")
    app = live_app()
    async with app.run_test(size=(120, 30)) as pilot:
        picker = await open_picker(pilot)
        rows = shown(picker)
        assert len(rows) == 200 and "task number 2999" in rows[0]
        note = str(picker.query_one("#session-note").render())
        assert note == "the newest 200 of 3000 shown: type to narrow"
        picker.query_one("#session-query", Input).value = "number 1234"  # typed at once
        await wait_for(pilot, lambda: len(shown(picker)) == 1, "the old one is found")
        assert "task number 1234" in shown(picker)[0]


async def test_resume_alone_on_the_command_line_opens_the_picker_at_start(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    earlier_session(model_server, project, "yesterday's work")
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())
    agents: list[Agent] = []

    def factory(sink: Any) -> Agent:
        agents.append(Agent(config, sink, project, retry_delays=()))
        return agents[-1]

    app = MMApp(
        config,
        project,
        agent_factory=factory,
        history_path=tmp_path / "history.jsonl",
        pick_session=True,
    )
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: isinstance(app.screen, SessionPicker), "the picker")
            await pilot.press("enter")
            await wait_for(pilot, lambda: said_users(app) == ["yesterday's work"], "shown")
    finally:
        for agent in agents:
            agent.close()


def test_resume_alone_with_p_is_refused_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "-p", "hi", "--resume"],
        cwd=tmp_path,
        env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == (
        "mm-tui: --resume needs a session id with -p (the picker is the window's)\n"
    )


def test_a_row_says_when_size_messages_and_the_first_message_literally() -> None:
    info = SessionInfo(
        "abc", "/p", 0.0, "fix \x1b[31mred\x1b[0m text", 12, 0.0, Path("/p/abc.jsonl"), 4200
    )
    line = session_line(info, "", lambda _: "2026-12-02 09:41").plain
    assert line == "2026-12-02 09:41    12 msg    4.2 kB  fix red text"
    assert session_line(info, "abc", lambda _: "d").plain.endswith(
        "kB  ◀ this session · fix red text"
    )
    assert [human_size(n) for n in (812, 4200, 12_000_000)] == ["812 B", "4.2 kB", "12.0 MB"]
