"""Sessions that scale: an append-only log that a crash cannot lose, history kept
through compaction, version-1 files still read, one writer at a time, a per-directory index."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mm_tui.agent.events import Notice, TextDelta, ToolFinished, TurnStarted
from mm_tui.agent.session import SessionBusy, SessionStore, read_session_document
from mm_tui.agent.session_data import Session
from mm_tui.agent.session_log import TORN_LAST_LINE, message_line
from mm_tui.replay import Pace, load_replay
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mm_tui.agent.session import SessionStore
    from mm_tui.agent.session_data import Session
    from mm_tui.agent.session_log import message_line

    store = SessionStore(Path(sys.argv[1]))
    session = Session(id="killed", model="m", base_url="u", cwd="/p",
                      messages=[{"role": "system", "content": "s"}])
    log = store.create(session)
    body = "x" * int(sys.argv[2])
    n = 0
    while True:
        n += 1
        log.append([message_line({"role": "user", "content": f"{n} {body}"})])
        print(n, flush=True)
    """
)

HOLDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from mm_tui.agent.session import SessionStore
    from mm_tui.agent.session_log import message_line

    opened = SessionStore(Path(sys.argv[1])).open(sys.argv[2])
    print("holding", flush=True)
    sys.stdin.readline()
    opened.log.append([message_line({"role": "user", "content": "from the holder"})])
    opened.log.close()
    print("done", flush=True)
    """
)


def new_session(store: SessionStore, id_: str, cwd: str, *texts: str) -> Session:
    session = Session(
        id=id_, model="m", base_url="u", cwd=cwd, messages=[{"role": "system", "content": "s"}]
    )
    log = store.create(session)
    for text in texts:
        message = {"role": "user", "content": text}
        session.messages.append(message)
        log.append([message_line(message)])
    log.close()
    session.history = list(session.messages)
    store.note(session)
    return session


@pytest.mark.parametrize("size", [100, 200_000, 4_000_000])
def test_sigkill_mid_append_loses_at_most_the_message_being_written(
    tmp_path: Path, size: int
) -> None:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path), str(size)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    while int(process.stdout.readline() or 0) < 5:
        pass
    process.send_signal(signal.SIGKILL)
    process.wait(10)
    reported = [int(line) for line in process.stdout.read().split()]
    done = reported[-1] if reported else 5  # the last append that had returned

    opened = SessionStore(tmp_path).open("killed")
    assert opened.log is not None
    numbers = [int(m["content"].split()[0]) for m in opened.session.messages[1:]]
    assert numbers == list(range(1, len(numbers) + 1))  # in order, none missing
    assert len(numbers) in (done, done + 1)  # at most the message being written is lost
    assert all(
        len(m["content"]) == len(f"{n} ") + size
        for n, m in zip(numbers, opened.session.messages[1:], strict=True)
    )
    # the writer goes on after whatever the crash left: the next line is whole
    opened.log.append([message_line({"role": "user", "content": "after the crash"})])
    opened.log.close()
    again = SessionStore(tmp_path).read("killed")
    assert again.notices == [] and again.session.messages[-1]["content"] == "after the crash"


def test_a_torn_last_line_is_ignored_with_a_notice_and_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    store = SessionStore(tmp_path)
    new_session(store, "torn", "/p", "one", "two")
    path = store.path_for("torn")
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","message":{"role":"user","content":"thr')

    opened = store.open("torn")
    assert [m["content"] for m in opened.session.messages] == ["s", "one", "two"]
    assert opened.notices == [TORN_LAST_LINE.format(id="torn")]
    assert opened.log is not None
    opened.log.append([message_line({"role": "user", "content": "three"})])
    opened.log.close()
    reread = store.read("torn")
    assert reread.notices == [] and [m["content"] for m in reread.session.messages][-1] == "three"


def test_a_session_held_by_another_process_is_forked_never_written(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="first answer"), Reply(text="in the fork"))
    first, _ = make_agent()
    first.run_turn("remember 42")
    first.close()
    store = SessionStore(first.session_path.parent)
    original = first.session.id
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store.directory), original],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdin is not None and holder.stdout is not None
    try:
        assert holder.stdout.readline().strip() == "holding"
        with pytest.raises(SessionBusy):
            store.open(original)
        assert store.read(original).session.messages == first.messages  # read-only is fine

        second, _ = make_agent(resume=original)
        fork = second.session
        assert fork.id != original and fork.forked_from == original
        [said] = [n for n in second.startup_notices if "in use by another mm-tui" in n.text]
        assert said == Notice(
            "warning",
            f"session {original} is in use by another mm-tui — it was left as it is; "
            f"this one goes on in a copy, session {fork.id}",
        )
        second.run_turn("what number?")
        sent = json.dumps(model_server.requests[-1]["messages"])
        assert "remember 42" in sent and "first answer" in sent

        holder.stdin.write("go\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "done"
    finally:
        holder.kill()
        holder.wait(10)
    held = [m["content"] for m in store.read(original).session.messages]
    assert held[-1] == "from the holder" and "what number?" not in held
    forked = [m["content"] for m in store.read(fork.id).session.messages]
    assert "remember 42" in forked and "what number?" in forked and "from the holder" not in forked


def test_compaction_keeps_every_message_in_the_file_and_replay_shows_them_all(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, _ = make_agent()
    for i in range(4):
        model_server.enqueue(
            Reply(tool_calls=[ToolCall("echo", {"text": f"tool {i}"})]), Reply(text=f"answer {i}")
        )
        agent.run_turn(f"request {i}")
    model_server.enqueue(Reply(text="## Goal\n- echo things"))
    agent.compact()
    assert "request 1" not in json.dumps(agent.messages)  # the model is sent the summary...
    model_server.enqueue(Reply(text="answer 4"))
    agent.run_turn("request 4")
    sent = json.dumps(model_server.requests[-1]["messages"])
    assert "## Goal" in sent and "request 1" not in sent and "request 3" in sent
    agent.close()

    # ...the file keeps everything, and a resumed session sends what the live one did
    resumed, _ = make_agent(resume=agent.session.id)
    assert resumed.messages == agent.messages and resumed.history == agent.history
    assert_valid_history(resumed.messages)
    timed, _ = load_replay(agent.session_path, Pace(speed=0))
    events = [event for _, event in timed]
    started = [e.text for e in events if isinstance(e, TurnStarted)]
    assert started == [f"request {i}" for i in range(5)]
    outputs = [e.output for e in events if isinstance(e, ToolFinished)]
    assert outputs == [f"tool {i}" for i in range(4)]
    said = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert all(f"answer {i}" in said for i in range(5)) and "## Goal" in said


V1_SESSION = {
    "version": 1,
    "id": "20250101-120000-abcdef",
    "model": "old-model",
    "base_url": "http://localhost:11434/v1",
    "cwd": "",  # set per test
    "created": 1735732800.0,
    "messages": [
        {"role": "system", "content": "You are mm."},
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py\n"},
        {"role": "assistant", "content": "One file."},
    ],
    "tool_meta": {"c1": {"title": "bash ls", "status": "done", "duration": 0.5, "diff": None,
                         "badge": "json repaired", "raw": "{command: ls}"}},
    "counters": {"commands": 1, "file_ops": 0, "skills": 0, "lsp_calls": 0, "turns": 1},
    "usage": {"prompt_tokens": 100, "completion_tokens": 10},
    "errors": [{"time": "t", "where": "model", "message": "server gone"}],
}  # fmt: skip


def test_a_version_1_file_is_found_by_continue_read_and_converted_on_write(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    legacy = sessions / f"{V1_SESSION['id']}.json"
    legacy.write_text(json.dumps(V1_SESSION | {"cwd": str(tmp_path.resolve())}))
    (sessions / "other.json").write_text(json.dumps(V1_SESSION | {"id": "other", "cwd": "/x"}))
    before = SessionStore(sessions).read(V1_SESSION["id"]).session.to_json()

    model_server.enqueue(Reply(text="Still one file."))
    agent, _ = make_agent(continue_last=True)
    assert agent.session.id == V1_SESSION["id"] and agent.model == "scripted-model"
    assert agent.messages == V1_SESSION["messages"]
    assert any("converted from a version-1 file" in n.text for n in agent.startup_notices)
    assert not legacy.exists() and agent.session_path.suffix == ".jsonl"
    agent.run_turn("and now?")
    agent.close()

    after = read_session_document(agent.session_path)
    assert after["messages"][:5] == before["messages"]
    assert after["messages"][-1] == {"role": "assistant", "content": "Still one file."}
    assert after["tool_meta"] == before["tool_meta"] and after["errors"] == before["errors"]
    assert after["counters"]["turns"] == 2 and after["counters"]["commands"] == 1
    assert (sessions / "other.json").exists()  # another directory's file is left alone


def test_the_index_lists_a_directorys_sessions_for_the_picker(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    new_session(store, "a1", "/project/a", "fix the   parser\nplease")
    time.sleep(0.01)
    new_session(store, "b1", "/project/b", "elsewhere")
    time.sleep(0.01)
    new_session(store, "a2", "/project/a", "second", "and more")

    listed = store.list_sessions(Path("/project/a"))
    assert [(i.id, i.cwd, i.first_message, i.messages) for i in listed] == [
        ("a2", "/project/a", "second", 3),
        ("a1", "/project/a", "fix the parser please", 2),
    ]
    assert listed[0].size == store.path_for("a2").stat().st_size and listed[0].started > 0
    latest = store.latest_for(Path("/project/a"))
    assert latest is not None and latest.id == "a2"
    assert {i.id for i in store.list_sessions()} == {"a1", "a2", "b1"}

    forked = store.fork("a1")
    assert forked.session.forked_from == "a1" and forked.session.messages[1]["content"].startswith(
        "fix"
    )
    assert forked.log is not None
    forked.log.close()
    assert store.latest_for(Path("/project/a")).id == forked.session.id  # type: ignore[union-attr]


def test_the_window_lists_opens_and_forks_sessions_through_the_agent(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    agent, _ = make_agent()
    agent.run_turn("first task")
    first = agent.session.id
    agent.new_session()
    agent.run_turn("second task")
    second = agent.session.id

    listed = agent.list_sessions()
    assert [(i.id, i.first_message, i.messages) for i in listed] == [
        (second, "second task", 3),
        (first, "first task", 3),
    ]
    assert agent.open_session(second) == [Notice("info", f"already in session {second}")]
    [said] = agent.open_session(first)
    assert said == Notice("info", f"opened session {first} (3 messages)")
    assert agent.session.id == first and agent.messages[1]["content"] == "first task"
    agent.run_turn("more on the first")
    assert "first task" in json.dumps(model_server.requests[-1]["messages"])

    notices = agent.fork_session(second)
    assert agent.session.forked_from == second and agent.session.id not in (first, second)
    assert notices[-1].text.startswith(f"forked session {second} (3 messages) as ")
    [bad] = agent.open_session("no-such-session")
    assert bad.level == "error" and "staying in this session" in bad.text
    assert agent.session.forked_from == second  # nothing changed
    agent.close()
    assert SessionStore(agent.session_path.parent).open(first).log is not None  # released


def test_the_index_is_rewritten_when_it_grows_and_keeps_the_latest_of_each_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mm_tui.agent import session_index

    monkeypatch.setattr(session_index, "REWRITE_AFTER_BYTES", 500)
    store = SessionStore(tmp_path)
    session = new_session(store, "busy", "/p", "hello")
    for n in range(40):
        session.history.append({"role": "assistant", "content": f"answer {n}"})
        store.note(session)
    index_file = store.index.file_for("/p")
    assert index_file.read_bytes().count(b"\n") < 20  # rewritten, not 41 lines
    [info] = store.list_sessions(Path("/p"))
    assert (info.id, info.messages) == ("busy", 42)


def test_after_close_a_turn_still_running_writes_nothing_and_raises_nothing(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="one"))
    agent, events = make_agent()
    agent.run_turn("hello")
    agent.close()  # the person quit while a worker still held the agent
    size = agent.session_path.stat().st_size
    agent.conversation.append({"role": "assistant", "content": "late"})
    agent.conversation.add_error("model", "late too")
    assert agent.session_path.stat().st_size == size
    assert not [n for n in events.of(Notice) if n.level == "error"]
    assert SessionStore(agent.session_path.parent).open(agent.session.id).log is not None
