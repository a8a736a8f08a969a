"""The window on a server that answers as `mlx_lm.server` does (HTTP/1.0, the body ended by
closing the connection): a turn with a tool call streams and ends as on any other server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.test_model_transport import TEXT, relay
from tests.window.conftest import send, wait_for
from tests.window.test_window_conversation import answers, notices, turn_over

pytestmark = pytest.mark.anyio


async def test_a_close_delimited_http10_server_carries_a_turn_in_the_window(
    model_server: ScriptedServer, project: Path, tmp_path: Path
) -> None:
    model_server.enqueue(
        Reply(text="Let me look.", tool_calls=[ToolCall("bash", {"command": "echo hi"})]),
        Reply(text=TEXT, chunk_size=3),
    )
    agents: list[Agent] = []
    front = relay(model_server.root_url)
    root, _seen = next(front)
    config = Config(base_url=root + "/v1", model="scripted-model", lsp_servers=(),
                    permissions="allow")  # fmt: skip

    def factory(sink: Any) -> Agent:
        agents.append(Agent(config, sink, project, retry_delays=()))
        return agents[-1]

    app = MMApp(config, project, agent_factory=factory, history_path=tmp_path / "h.jsonl")
    try:
        async with app.run_test(size=(100, 40)) as pilot:
            await send(pilot, "go")
            await wait_for(pilot, turn_over(app), "the turn ends")
            assert answers(app)[-1] == TEXT, notices(app)
    finally:
        for agent in agents:
            agent.close()
        front.close()
    assert len(model_server.requests) == 2
