"""The first run: the empty transcript says what the server check found, and how to begin;
the top line names the model from then on, not from the first turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.server_check import Finding, FirstRunCheck, first_run_check
from mm_tui.app import MMApp
from mm_tui.widgets.first_run import HINTS, FirstRunPanel
from mm_tui.widgets.top_line import TopLine
from mm_tui.window.ports import live_factory
from scripted_server import Reply, ScriptedServer
from tests.window.conftest import send, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


async def shown(still_app: Any, panel: FirstRunPanel) -> str:
    app = still_app()
    async with app.run_test(size=(100, 24)) as pilot:
        await app.transcript.mount(panel)
        await wait_for(pilot, lambda: panel.findings is not None, "the check answered")
        return str(panel.render())


async def test_a_live_server_is_named_with_its_model_context_and_hints(
    still_app: Any, model_server: ScriptedServer
) -> None:
    model_server.n_ctx = 32768
    config = Config(base_url=model_server.base_url)
    text = await shown(
        still_app, FirstRunPanel(lambda: first_run_check(config), url=config.base_url)
    )

    assert text.splitlines() == [
        f"✓ server {model_server.base_url} answers (1 model(s))",
        "✓ model scripted-model (the first the server lists; choose with --model or /model)",
        "✓ context window 32768 tokens (llama-server /props)",
        "",
        *HINTS,
    ]


async def test_a_server_that_is_down_gets_the_command_to_start_it_and_no_hints(
    still_app: Any,
) -> None:
    config = Config(base_url="http://127.0.0.1:9/v1")
    text = await shown(
        still_app, FirstRunPanel(lambda: first_run_check(config), url=config.base_url)
    )

    lines = text.splitlines()
    assert lines[0].startswith("✗ no model server answers at http://127.0.0.1:9/v1 (")
    assert lines[1:] == ["↳ run: llama-server -m MODEL.gguf --jinja --port 9"]


async def test_a_check_that_raises_is_one_warning_line(still_app: Any) -> None:
    def broken() -> FirstRunCheck:
        raise RuntimeError("boom")

    text = await shown(still_app, FirstRunPanel(broken, url="http://x/v1"))

    assert text.splitlines()[0] == "! the server check failed: boom"


def test_snapshot_the_first_run_of_the_window(snap_compare: Any, still_app: Any) -> None:
    def found() -> FirstRunCheck:
        return FirstRunCheck(
            [
                Finding("server", "ok", "server http://localhost:11434/v1 answers (0 model(s))"),
                Finding(
                    "model",
                    "problem",
                    "Ollama has no model pulled",
                    "ollama pull qwen2.5-coder:14b",
                ),
            ]
        )

    async def run_before(pilot: Any) -> None:
        await wait_for(
            pilot, lambda: pilot.app.query_one(FirstRunPanel).findings is not None, "checked"
        )

    assert snap_compare(still_app(first_run=found), terminal_size=(90, 20), run_before=run_before)


def test_snapshot_the_first_run_with_a_server_ready(snap_compare: Any, still_app: Any) -> None:
    def found() -> FirstRunCheck:
        findings = [
            Finding("server", "ok", "server http://localhost:11434/v1 answers (3 model(s))"),
            Finding("model", "ok", "model qwen2.5-coder:14b"),
            Finding("context", "ok", "context window 32768 tokens (ollama num_ctx)"),
        ]
        return FirstRunCheck(findings, "qwen2.5-coder:14b")

    async def run_before(pilot: Any) -> None:
        await wait_for(
            pilot, lambda: pilot.app.query_one(FirstRunPanel).findings is not None, "checked"
        )

    assert snap_compare(still_app(first_run=found), terminal_size=(90, 20), run_before=run_before)


def top_line(app: MMApp) -> str:
    return str(app.query_one(TopLine).render())


async def test_the_top_line_names_the_servers_model_once_the_check_finds_it_before_any_turn(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    """No model configured: the core takes the server's first at the first turn; the top line
    said "no model yet" until then while the panel below already named it (tried in tmux)."""
    model_server.models = ["first-listed", "second-listed"]
    config = Config(base_url=model_server.base_url)
    app = MMApp(
        config,
        tmp_path,
        agent_factory=live_factory(config, tmp_path),
        first_run=lambda: first_run_check(config),
        history_path=tmp_path / "history.jsonl",
        still=True,
    )
    async with app.run_test(size=(120, 24)) as pilot:
        panel = app.query_one(FirstRunPanel)
        await wait_for(pilot, lambda: panel.findings is not None, "the check answered")
        await wait_for(pilot, lambda: app.turns.port is not None, "the core is ready")
        await wait_for(pilot, lambda: "mm-tui · first-listed · context" in top_line(app),
                       "the listed model on the top line")  # fmt: skip
        assert model_server.requests == []  # known without a turn


@pytest.mark.parametrize("found", ["other-first", ""])
async def test_a_configured_model_stays_on_the_top_line_whatever_the_server_lists(
    still_app: Any, found: str
) -> None:
    """The configured model is the one the core uses: shown from the first frame, and kept
    whatever the check says (another model first, or none: the configured one is missing)."""
    app = still_app(Config(model="configured-model"), first_run=lambda: FirstRunCheck([], found))
    async with app.run_test(size=(120, 24)) as pilot:
        assert "mm-tui · configured-model · context" in top_line(app)
        panel = app.query_one(FirstRunPanel)
        await wait_for(pilot, lambda: panel.findings is not None, "the check answered")
        await pilot.pause()
        assert "mm-tui · configured-model · context" in top_line(app)


async def test_yolo_from_the_command_line_is_on_the_top_line_from_the_first_frame(
    still_app: Any,
) -> None:
    app = still_app(Config(model="m", yolo=True))
    async with app.run_test(size=(120, 24)):
        assert top_line(app).endswith(" · yolo")


async def test_the_top_line_says_the_prompt_apart_only_once_it_differs_from_the_context(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    """After a first short turn the context is the fixed prompt: `prompt 1.3k/8.2k` beside
    `context 1.3k/8.2k` said it twice. It shows once the conversation adds to it."""
    config = Config(base_url=model_server.base_url, model="m", lsp_servers=())
    agents: list[Agent] = []

    def factory(sink: Any) -> Agent:
        agents.append(Agent(config, sink, tmp_path, retry_delays=()))
        return agents[-1]

    model_server.enqueue(Reply(text="Hi."), Reply(text="Read it."))
    app = MMApp(config, tmp_path, agent_factory=factory, history_path=tmp_path / "h.jsonl")
    try:
        async with app.run_test(size=(200, 30)) as pilot:
            await send(pilot, "hi")
            await wait_for(pilot, turn_over(app), "the first turn ends")
            await pilot.pause()
            first = top_line(app)
            assert "context " in first and "prompt " not in first, first
            await send(pilot, "please read this: " + "lorem ipsum dolor sit amet " * 150)
            await wait_for(pilot, turn_over(app, 2), "the second turn ends")
            await pilot.pause()
            second = top_line(app)
            assert "prompt " in second, second
    finally:
        for agent in agents:
            agent.close()
