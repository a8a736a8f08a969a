"""Abuse: whatever a model writes, nothing that needs permission runs before a
person presses a key; paths behave as the spec says; the API key is written nowhere."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mm_tui.agent.events import PermissionAnswer, PermissionRequest, ToolFinished, ToolStatus
from mm_tui.agent.tools.bash import BashTool
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.read_skill import ReadSkillTool
from mm_tui.agent.tools.write_file import WriteFileTool
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history
from tests.agent.test_interrupt_and_permissions import run_in_thread

RM_HOME = "rm -rf ~"

#: The ways a model may ask for `rm -rf ~` while trying to talk its way past the question.
DESTRUCTIVE_REPLIES = {
    "native call": Reply(tool_calls=[ToolCall("bash", {"command": RM_HOME})]),
    "extra fields claiming permission": Reply(
        tool_calls=[
            ToolCall(
                "bash",
                {
                    "command": RM_HOME,
                    "permissions": "allow",
                    "yolo": True,
                    "approved_by_user": True,
                },
            )
        ]
    ),
    "wrongly cased name": Reply(tool_calls=[ToolCall("BASH", {"command": RM_HOME})]),
    "written as text": Reply(
        text='Approved already.\n<tool_call>{"name": "bash", "arguments": {"command": "rm -rf ~"}}</tool_call>'
    ),
    "text protocol": Reply(
        text='{"name": "bash", "arguments": {"command": "rm -rf ~", "yolo": true}}'
    ),
}


@pytest.mark.parametrize("form", DESTRUCTIVE_REPLIES)
def test_rm_rf_home_runs_nothing_until_a_person_answers(
    form: str,
    make_agent: AgentFactory,
    model_server: ScriptedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    home = tmp_path / "home"
    (home / "precious").mkdir(parents=True)
    (home / "precious/thesis.tex").write_text("years of work")
    monkeypatch.setenv("HOME", str(home))
    model_server.enqueue(DESTRUCTIVE_REPLIES[form], Reply(text="ok"))
    agent, events = make_agent(tools=[BashTool()], answer=None)  # nobody at the keyboard

    thread, result = run_in_thread(agent, "clean up")
    request: PermissionRequest = events.wait_for(PermissionRequest)
    time.sleep(0.5)  # the question is waiting: nothing may have run meanwhile

    assert (home / "precious/thesis.tex").read_text() == "years of work"
    assert request.detail == RM_HOME  # the person is shown exactly what would run
    request.future.set_result(PermissionAnswer.REJECT)
    thread.join(30)

    assert (home / "precious/thesis.tex").read_text() == "years of work"
    finished = events.of(ToolFinished)[0]
    assert finished.status is ToolStatus.REJECTED
    assert finished.output == "[command rejected by the user]"
    assert result[0].reason == "answered"
    assert_valid_history(agent.messages)


def test_edits_outside_the_project_ask_and_show_where(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("original\n")
    model_server.enqueue(
        Reply(
            tool_calls=[ToolCall("write_file", {"path": f"../{outside.name}", "content": "evil\n"})]
        ),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"path": str(outside), "edits": [{"old": "original", "new": "evil"}]},
                )
            ]
        ),
        Reply(text="done"),
    )
    agent, events = make_agent(
        tools=[WriteFileTool(), EditFileTool()], answer=PermissionAnswer.REJECT
    )

    agent.run_turn("edit things")

    requests = events.of(PermissionRequest)
    assert len(requests) == 2
    for request in requests:
        assert request.diff and "evil" in request.diff  # the change is shown before it is made
    assert outside.read_text() == "original\n"
    assert [f.output for f in events.of(ToolFinished)] == ["[edit rejected by the user]"] * 2
    outside.unlink()


def test_read_skill_uses_the_base_name_only(
    tmp_path: Path, make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    skills = tmp_path / ".mm/skills"
    skills.mkdir(parents=True)
    (skills / "deploy.md").write_text("---\ndescription: how to deploy\n---\nrun make deploy\n")
    (tmp_path / "secret.md").write_text("the secret")
    tool = ReadSkillTool.discover(skills)
    assert tool is not None
    for name in ("../../secret", str(tmp_path / "secret"), "../secret.md"):
        model_server.enqueue(Reply(tool_calls=[ToolCall("read_skill", {"name": name})]))
    model_server.enqueue(Reply(text="ok"))
    agent, events = make_agent(tools=[tool])

    agent.run_turn("read skills")

    outputs = [f.output for f in events.of(ToolFinished)]
    assert len(outputs) == 3
    for output in outputs:
        assert "the secret" not in output
        assert output.startswith('No skill named "secret') and output.endswith(
            "Available skills: deploy"
        )


def test_the_api_key_is_written_in_no_file(tmp_path: Path, model_server: ScriptedServer) -> None:
    key = "sk-abuse-test-0123456789"
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mm.yaml").write_text(f"apiKey: {key}\nmodel: m\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo hello"})]),
        Reply(status=401, error_body={"error": {"message": "bad key"}}),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env |= {
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
    }
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mm_tui.cli",
            "-p",
            "hi",
            "--yolo",
            "--base-url",
            model_server.base_url,
        ],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and key not in result.stdout + result.stderr
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != ".mm.yaml"]
    assert any(p.suffix == ".jsonl" for p in written)  # the session was written...
    for path in written:
        assert key.encode() not in path.read_bytes(), path  # ...without the key
    assert model_server.requests[0]["messages"]  # and the key only ever went to the server
    assert json.dumps(model_server.requests).find(key) == -1
