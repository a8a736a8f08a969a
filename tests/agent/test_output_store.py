"""A call's whole output is kept beside the session, bounded: head and tail, the gap said."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import ToolFinished
from mm_tui.agent.output_store import (
    FullOutputWriter,
    output_file,
    outputs_dir,
    read_full_output,
)
from scripted_server import Reply, ScriptedServer, ToolCall


def test_an_output_under_the_limit_is_kept_whole(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "20260101-abc.json"
    writer = FullOutputWriter(output_file(session, "call_1"), limit=1_000)
    for part in ("collecting...\n", "12 passed", " in 0.3s\n"):
        writer.append(part)
    writer.close()

    assert outputs_dir(session) == tmp_path / "sessions" / "20260101-abc.outputs"
    assert read_full_output(session, "call_1") == "collecting...\n12 passed in 0.3s\n"


def test_a_huge_output_keeps_its_head_and_tail_and_says_the_gap(tmp_path: Path) -> None:
    session = tmp_path / "s.json"
    writer = FullOutputWriter(output_file(session, "c"), limit=100)
    text = "".join(f"{i:05d}\n" for i in range(10_000))  # 60,000 characters in many pieces
    for start in range(0, len(text), 7):
        writer.append(text[start : start + 7])
    writer.close()

    kept = read_full_output(session, "c")
    assert kept is not None
    assert kept.startswith(text[:50])
    assert kept.endswith(text[-50:])
    assert "[… 59,900 characters not kept here …]" in kept


def test_no_kept_output_reads_as_none_and_odd_call_ids_make_safe_names(tmp_path: Path) -> None:
    session = tmp_path / "s.json"
    assert read_full_output(session, "missing") is None
    assert output_file(session, "../../etc/passwd").parent == outputs_dir(session)


def test_an_unwritable_folder_loses_the_copy_not_the_turn(tmp_path: Path) -> None:
    blocker = tmp_path / "s.outputs"
    blocker.write_text("a file where the folder should be")
    writer = FullOutputWriter(output_file(tmp_path / "s.json", "c"))
    writer.append("text")
    writer.close()

    assert read_full_output(tmp_path / "s.json", "c") is None


def test_the_agent_keeps_a_commands_whole_output_beside_the_session(
    tmp_path: Path, model_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    command = "for i in $(seq 1 3000); do echo line $i; done"
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": command}, id="c1")]))
    model_server.enqueue(Reply(text="done"))
    config = Config(
        base_url=model_server.base_url, model="m", yolo=True, max_output=1000, lsp_servers=()
    )
    events: list[object] = []
    agent = Agent(config, events.append, tmp_path, retry_delays=())
    try:
        agent.run_turn("count")
        whole = agent.full_output("c1")
    finally:
        agent.close()

    [finished] = [e for e in events if isinstance(e, ToolFinished)]
    assert len(finished.output) < 1_200  # the model's copy is cut
    assert whole is not None
    assert whole.splitlines()[0] == "line 1"
    assert whole.splitlines()[-1] == "line 3000"
    assert output_file(agent.session_path, "c1").is_file()
    assert agent.full_output("no-such-call") is None
