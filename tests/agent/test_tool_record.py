"""The row kept per tool call (`tool_meta` of a session file) and the counter names: one
typed record written by the session and read by replay; each counter spelled once."""

from __future__ import annotations

import json
from dataclasses import fields

from mm_tui.agent.events import ToolKind, ToolStatus, TurnSummary
from mm_tui.agent.session import Session, SessionStore, read_session_document
from mm_tui.agent.tool_record import ToolRecord
from mm_tui.replay import Pace, session_events
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory


def test_a_repaired_call_keeps_its_badge_and_raw_text_in_the_old_json_shape() -> None:
    record = ToolRecord("bash ls", ToolStatus.DONE, 0.12345, None, "name fixed", '{"cmd": ls}')
    assert record.to_json() == {
        "title": "bash ls",
        "status": "done",
        "duration": 0.123,
        "diff": None,
        "badge": "name fixed",
        "raw": '{"cmd": ls}',
    }
    assert ToolRecord.from_json(record.to_json()) == ToolRecord(
        "bash ls", ToolStatus.DONE, 0.123, None, "name fixed", '{"cmd": ls}'
    )


def test_a_native_call_writes_no_badge_and_its_kind_when_counted() -> None:
    record = ToolRecord("edit_file a.py", ToolStatus.FAILED, 1.0, "-a\n+b", kind=ToolKind.FILE)
    data = record.to_json()
    assert "badge" not in data and "raw" not in data and data["kind"] == "file_ops"
    assert ToolRecord.from_json(json.loads(json.dumps(data))) == record


def test_old_or_odd_records_load_with_defaults() -> None:
    assert ToolRecord.from_json(None) == ToolRecord("", ToolStatus.DONE, 0.0)
    odd = ToolRecord.from_json({"status": "exploded", "duration": "soon", "kind": "weird"})
    assert (odd.status, odd.duration, odd.kind) == (ToolStatus.DONE, 0.0, None)
    old = ToolRecord.from_json({"title": "bash ls", "status": "rejected", "duration": 0.5})
    assert old.counted_kind("bash") is ToolKind.COMMAND and old.counted_kind("mystery") is None


def test_every_counter_is_named_by_its_tool_kind() -> None:
    counters = {f.name for f in fields(TurnSummary)} - {
        "duration",
        "prompt_tokens",
        "completion_tokens",
    }
    assert counters == {kind.value for kind in ToolKind}
    summary = TurnSummary.of({ToolKind.LSP: 2}, 1.0, 3, 4)
    assert [summary.count(kind) for kind in ToolKind] == [0, 0, 0, 2]
    assert summary.line().startswith("⚙ 0 command(s) · 📝 0 file op(s) · 📖 0 skill(s) · 🔎 2")


def test_the_session_writes_records_that_replay_reads_back(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", {"text": "x"})]), Reply(text="ok"))
    agent, _ = make_agent()
    agent.run_turn("go")
    data = read_session_document(agent.session_path)
    [(call_id, meta)] = data["tool_meta"].items()
    assert meta["title"] == "echo x" and meta["status"] == "done" and meta["kind"] == "commands"
    assert data["counters"]["commands"] == 1 and data["counters"]["turns"] == 1

    loaded = SessionStore(agent.session_path.parent).load(agent.session.id)
    assert isinstance(loaded, Session)
    assert loaded.tool_meta[call_id] == ToolRecord.from_json(meta)
    assert loaded.tool_meta[call_id].to_json() == agent.session.tool_meta[call_id].to_json()
    summaries = [e for _, e in session_events(data, Pace(speed=0)) if isinstance(e, TurnSummary)]
    assert [s.commands for s in summaries] == [1]
