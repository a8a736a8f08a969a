"""Every fault of the scripted server at each point of a turn, through the window:
the app keeps running, one clear line is shown, the session file is valid, and the next
message is answered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.session import read_session_document
from mm_tui.app import MMApp
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, SummaryLine
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import assert_valid_history
from tests.faults.test_model_faults import FAULTS, POINTS
from tests.window.conftest import send, wait_for

pytestmark = pytest.mark.anyio
BASH = ToolCall("bash", {"command": "echo a fairly long argument so the stream is cut in it"})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def window(
    model_server: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], tuple[MMApp, list[Agent]]]:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")
    config = Config(
        base_url=model_server.base_url, model="scripted-model", lsp_servers=(), yolo=True
    )

    def build() -> tuple[MMApp, list[Agent]]:
        agents: list[Agent] = []

        def factory(sink: Callable[[Any], None]) -> Agent:
            agent = Agent(config, sink, tmp_path, request_timeout=0.5, retry_delays=(0.01,) * 3)
            agents.append(agent)
            return agent

        app = MMApp(config, tmp_path, agent_factory=factory, history_path=tmp_path / "history")
        return app, agents

    return build


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("fault", FAULTS)
async def test_a_fault_shows_one_line_and_the_window_goes_on(
    fault: str, point: str, window: Any, model_server: ScriptedServer
) -> None:
    # The same points as the agent-level suite, with a real bash call in place of echo.
    before, carried = POINTS[point]
    if "tool_calls" in carried:
        carried = carried | {"tool_calls": [BASH]}
    before = [Reply(tool_calls=[BASH]) for _ in before]
    faulty = FAULTS[fault](**carried)
    retries = 3 if faulty.status in (429, 500) else 0
    model_server.enqueue(*before, *([faulty] * (1 + retries)))
    model_server.enqueue(Reply(text="Recovered."))
    app, agents = window()

    async with app.run_test() as pilot:
        await send(pilot, "do it")
        await wait_for(
            pilot,
            lambda: len(app.query(SummaryLine)) >= 1 and not app.turns.running,
            "the turn ends",
        )
        errors = [n.text for n in app.query(NoticeLine) if n.level == "error"]
        assert len(errors) == 1 and "\n" not in errors[0]
        assert app.is_running
        await send(pilot, "again")
        await wait_for(
            pilot,
            lambda: len(app.query(SummaryLine)) >= 2 and not app.turns.running,
            "the next turn ends",
        )
        assert [b.to_markdown() for b in app.query(AnswerBlock)][-1] == "Recovered."

    [agent] = agents
    saved = read_session_document(agent.session_path)
    assert_valid_history(saved["messages"])
    assert saved["errors"][0]["message"] == errors[0]
