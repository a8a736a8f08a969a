"""The prompt and the keys: Enter, Ctrl+J, history, completion, help, rows that fold."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.config import Config
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.widgets.blocks import NoticeLine, UserMessage
from mm_tui.widgets.help_screen import HelpScreen
from mm_tui.widgets.pickers import ModelPicker
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.slash_menu import SlashMenu
from scripted_server import Reply
from tests.window.conftest import agent_of, play, send, settle, wait_for
from tests.window.window_scenes import finished_rows_in_every_status

pytestmark = pytest.mark.anyio


def notices(app: Any) -> list[str]:
    return [notice.text for notice in app.query(NoticeLine)]


async def test_ctrl_j_adds_a_line_and_enter_sends_both(model_server: Any, live_app: Any) -> None:
    model_server.enqueue(Reply(text="ok"))
    app = live_app()
    async with app.run_test() as pilot:
        await pilot.press("h", "i", "ctrl+j", "y", "o", "u")
        assert app.query_one(PromptInput).text == "hi\nyou"
        await pilot.press("enter")
        await wait_for(pilot, lambda: bool(app.query(UserMessage)), "the message is sent")
        assert app.query_one(UserMessage).text == "hi\nyou"
        assert (
            model_server.wait_for_requests(1, timeout=30)[0]["messages"][-1]["content"] == "hi\nyou"
        )


async def test_up_and_down_walk_a_history_kept_across_runs(still_app: Any, tmp_path: Path) -> None:
    history = tmp_path / "history.jsonl"
    app = still_app(history_path=history)
    async with app.run_test() as pilot:
        await send(pilot, "/help")
        await pilot.press("escape")
        await send(pilot, "/yolo")
    again = still_app(history_path=history)
    async with again.run_test() as pilot:
        prompt = again.query_one(PromptInput)
        await pilot.press("d", "r", "a", "f", "t")
        await pilot.press("up")
        assert prompt.text == "/yolo"
        await pilot.press("up")
        assert prompt.text == "/help"
        await pilot.press("down", "down")
        assert prompt.text == "draft"


async def test_tab_completes_a_slash_command_and_the_menu_lists_matches(still_app: Any) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await pilot.press("slash", "p")
        menu = app.query_one(SlashMenu)
        assert menu.display
        assert "/permissions" in str(menu.render())
        await pilot.press("tab")
        assert app.query_one(PromptInput).text == "/permissions "
        assert not menu.display


async def test_an_unknown_command_is_said_not_sent(still_app: Any) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await send(pilot, "/frobnicate")
        await wait_for(pilot, lambda: bool(notices(app)), "a notice")
        assert notices(app) == ["unknown command /frobnicate — /help lists the commands"]
        assert not app.query(UserMessage)


async def test_help_opens_with_f1_or_help_and_closes_with_esc(still_app: Any) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await send(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)


async def test_enter_space_and_a_click_fold_and_unfold_a_row(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, finished_rows_in_every_status())
        rows = app.transcript.rows
        assert (rows["done"].expanded, rows["failed"].expanded) == (False, True)
        rows["done"].focus()
        await pilot.press("enter")
        assert rows["done"].expanded and rows["done"].children
        await pilot.press("space")
        assert not rows["done"].expanded and not rows["done"].children
        await pilot.click(rows["done"], offset=(4, 0))
        assert rows["done"].expanded
        await pilot.press("o", "k")  # typing while a row has the focus types in the prompt
        assert app.query_one(PromptInput).text == "ok" and app.query_one(PromptInput).has_focus


async def test_a_paste_sent_as_keys_to_a_focused_row_reaches_the_prompt_whole(
    still_app: Any,
) -> None:
    """A terminal without bracketed paste sends pasted text as key presses, all at once: once
    the first character moved the focus to the prompt, the spaces and letters after it are
    the prompt's, not the row's fold (space) and raw-view (v) keys."""
    from textual import events

    app = still_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, finished_rows_in_every_status())
        row = app.transcript.rows["done"]
        row.focus()
        await settle(pilot)
        expanded = row.expanded
        for key, char in [("a", "a"), ("space", " "), ("v", "v"), ("space", " "), ("b", "b")]:
            app.post_message(events.Key(key, char))  # one burst: no wait between keys
        await settle(pilot)
        assert app.query_one(PromptInput).text == "a v b"
        assert row.expanded == expanded


async def test_tab_from_the_prompt_goes_to_the_newest_row(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, finished_rows_in_every_status())
        rows = list(app.transcript.rows.values())
        app.query_one(PromptInput).focus()
        await settle(pilot)
        await pilot.press("tab")
        await settle(pilot)
        assert app.focused is rows[-1]
        await pilot.press("shift+tab")  # and older ones from there
        await settle(pilot)
        assert app.focused is rows[-2]
        app.query_one(PromptInput).focus()
        await pilot.press("slash", "h", "e", "tab")  # completing a command still comes first
        await settle(pilot)
        assert app.query_one(PromptInput).text == "/help "


async def test_model_lists_the_servers_models_and_switches(
    model_server: Any, live_app: Any
) -> None:
    model_server.models = ["scripted-model", "other-model"]
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await send(pilot, "/model")
        await wait_for(pilot, lambda: isinstance(app.screen, ModelPicker), "the picker opens")
        await pilot.press("down", "enter")
        await wait_for(
            pilot, lambda: agent_of(app).top_line().model == "other-model", "the model switches"
        )
        await wait_for(pilot, lambda: "model: other-model" in notices(app), "it is said")
        assert "other-model" in str(app.query_one("#top-line").render())


async def test_a_missing_language_server_is_a_warning_at_start(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    from mm_tui.agent.agent import Agent
    from mm_tui.app import MMApp

    missing = LspServerSpec("nolsp", ("no-such-lsp-binary",), (".xyz",))
    config = Config(base_url=model_server.base_url, model="m", lsp_servers=(missing,))
    app = MMApp(
        config,
        project,
        agent_factory=lambda sink: Agent(config, sink, project),
        history_path=tmp_path / "h.jsonl",
    )
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: bool(notices(app)), "the start notices")
        warnings = [n for n in app.query(NoticeLine) if n.level == "warning"]
        assert any("nolsp (no-such-lsp-binary) not found on the PATH" in n.text for n in warnings)
        app.turns.close()


async def test_an_agent_that_cannot_start_is_one_error_line(still_app: Any) -> None:
    def broken(sink: Any) -> Any:
        raise OSError("no space left on device")

    app = still_app(agent_factory=broken)
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: bool(notices(app)), "the error")
        assert notices(app) == ["the agent could not start: no space left on device"]
        await send(pilot, "hello")  # queued, never lost, never a crash
        assert list(app.turns.queue) == ["hello"]
