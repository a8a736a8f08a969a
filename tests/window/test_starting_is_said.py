"""Until the core is built, the status line says "Starting…", not "Ready": a message sent at
"Ready" waited about a second for the core, with nothing to say why."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.widgets.status_line import IDLE_TEXT, STARTING_TEXT, StatusLine
from tests.window.conftest import wait_for

pytestmark = pytest.mark.anyio


async def test_the_status_line_says_starting_until_the_core_is_ready(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    release = threading.Event()
    agents: list[Agent] = []
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())

    def slow_factory(sink: Any) -> Agent:
        release.wait(30)  # the core's build, held until the test has looked
        agent = Agent(config, sink, project, retry_delays=())
        agents.append(agent)
        return agent

    app = MMApp(config, project, agent_factory=slow_factory, history_path=tmp_path / "h.jsonl")
    try:
        async with app.run_test() as pilot:
            line = app.query_one(StatusLine)
            shown = lambda: str(line.render())  # noqa: E731
            await wait_for(pilot, lambda: shown() == STARTING_TEXT, "Starting… while it builds")
            release.set()
            await wait_for(pilot, lambda: app.turns.port is not None, "the core is ready")
            await wait_for(pilot, lambda: shown() == IDLE_TEXT, "Ready once it can answer")
    finally:
        release.set()
        for agent in agents:
            agent.close()
