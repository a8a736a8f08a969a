"""The whole client against every server of the zoo, in its three faces: `mm-tui -p`, ACP (an
editor's client over a real stdio pipe) and the window (Textual's pilot). Each holds the
same conversation -- the model reads a file with a tool call, then answers from it -- and
the second request must carry the call and the file's lines, however the server framed its
stream (chunked or close-delimited), shaped its tool-call deltas, or dropped the tools."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.widgets.blocks import NoticeLine
from tests.acp.client import RecordingClient, mm_acp
from tests.faces.helpers import clean_env, mm
from tests.servers.scenario import (
    ANSWER,
    QUESTION,
    assert_the_file_reached_the_model,
    make_project,
    script,
)
from tests.servers.zoo import Emulator
from tests.window.conftest import send, wait_for
from tests.window.test_window_conversation import answers, notices, turn_over


def no_error_said(text: str) -> None:
    assert "Traceback" not in text and "[error]" not in text and "failure" not in text, text


def test_mm_p_holds_a_conversation_with_a_tool_call(emulator: Emulator, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    script(emulator)

    result = mm("-p", QUESTION, "--base-url", emulator.base_url, "--model", emulator.model,
                cwd=project, env=clean_env(tmp_path))  # fmt: skip

    assert result.returncode == 0, result.stdout + result.stderr
    assert "read_file notes.txt" in result.stdout
    assert result.stdout.rstrip().splitlines()[-2] == ANSWER, result.stdout
    no_error_said(result.stdout + result.stderr)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("[warning]")]
    assert warnings == [], warnings
    assert_the_file_reached_the_model(emulator)


def test_a_second_session_on_the_servers_warm_cache_warns_of_nothing(
    emulator: Emulator, tmp_path: Path
) -> None:
    """The second run's first request finds its whole fixed prompt in the server's cache:
    a server that counts only what it evaluated (Ollama, mlx) reports a few tokens."""
    project = make_project(tmp_path)
    for _ in range(2):
        script(emulator)
        result = mm("-p", QUESTION, "--base-url", emulator.base_url, "--model", emulator.model,
                    cwd=project, env=clean_env(tmp_path))  # fmt: skip
        assert result.returncode == 0, result.stdout + result.stderr
        assert result.stdout.rstrip().splitlines()[-2] == ANSWER, result.stdout
        warnings = [line for line in result.stderr.splitlines() if line.startswith("[warning]")]
        assert warnings == [], warnings
    assert len(emulator.requests) == 4


def test_acp_holds_a_conversation_with_a_tool_call(emulator: Emulator, tmp_path: Path) -> None:
    project = make_project(tmp_path)
    script(emulator)
    client = RecordingClient(answer="allow_once")

    async def scenario() -> str:
        async with mm_acp(client, tmp_path, "--base-url", emulator.base_url,
                          "--model", emulator.model) as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            response = await conn.prompt(session_id=session.session_id,
                                         prompt=[text_block(QUESTION)])  # fmt: skip
            return response.stop_reason

    assert asyncio.run(asyncio.wait_for(scenario(), timeout=115)) == "end_turn"
    assert client.message_text().endswith(ANSWER), client.message_text()
    [start] = client.starts()
    assert start.title == "read_file notes.txt" and start.kind == "read"
    assert client.final(start.tool_call_id).status == "completed"
    assert [n for n in client.notices() if n[0] in ("error", "warning")] == []
    assert_the_file_reached_the_model(emulator)


@pytest.mark.anyio
async def test_the_window_holds_a_conversation_with_a_tool_call(
    emulator: Emulator, tmp_path: Path
) -> None:
    project = make_project(tmp_path)
    script(emulator)
    config = Config(base_url=emulator.base_url, model=emulator.model, lsp_servers=(),
                    permissions="allow")  # fmt: skip
    agents: list[Agent] = []

    def factory(sink: Any) -> Agent:
        agents.append(Agent(config, sink, project, retry_delays=()))
        return agents[-1]

    app = MMApp(config, project, agent_factory=factory, history_path=tmp_path / "h.jsonl")
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            await send(pilot, QUESTION)
            await wait_for(pilot, turn_over(app), "the turn ends")
            assert answers(app)[-1] == ANSWER, notices(app)
            no_error_said("\n".join(notices(app)))
            warned = [n.text for n in app.query(NoticeLine) if n.level == "warning"]
            assert warned == [], warned
    finally:
        for agent in agents:
            agent.close()
    assert_the_file_reached_the_model(emulator)
