"""A day of real work in the window: `@` files, the full output, pastes, rows, Ctrl+G.

Pilot tests against the real Agent and the scripted server, keys pressed as a person does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from textual import events

from mm_tui.agent.events import ToolStarted
from mm_tui.app import MMApp
from mm_tui.widgets.blocks import NoticeLine, UserMessage
from mm_tui.widgets.file_picker import FilePicker
from mm_tui.widgets.output_viewer import OutputViewer
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.tool_row import ToolRow
from scripted_server import Reply, ToolCall
from tests.window.conftest import play, send, settle, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


async def test_at_opens_the_picker_and_the_chosen_file_goes_to_the_model(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="It greets."))
    app = live_app()
    async with app.run_test() as pilot:
        prompt = app.query_one(PromptInput)
        prompt.insert("explain ")
        await pilot.press("@")
        await wait_for(pilot, lambda: isinstance(app.screen, FilePicker), "the picker opens")
        await wait_for(pilot, lambda: app.screen.index is not None, "the files are listed")  # type: ignore[attr-defined]
        await pilot.press("g", "r", "e", "e", "t", "enter")
        await settle(pilot)
        assert prompt.text == "explain @greeter.py "
        await pilot.press("enter")
        await wait_for(pilot, turn_over(app), "the turn ends")

        sent = model_server.requests[0]["messages"][-1]["content"]
        assert sent.startswith('explain @greeter.py \n\n<file path="greeter.py">\ndef greet(')
        assert [m.text for m in app.query(UserMessage)] == ["explain @greeter.py "]
        notes = [n.text for n in app.query(NoticeLine)]
        assert "📎 greeter.py (79 characters)" in notes


async def test_an_at_inside_a_word_is_just_a_character(live_app: Any) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        app.query_one(PromptInput).insert("mail me")
        await pilot.press("@")
        await settle(pilot)
        assert not isinstance(app.screen, FilePicker)
        assert app.query_one(PromptInput).text == "mail me@"


async def test_ctrl_o_on_a_row_shows_the_whole_output_the_model_got_cut(
    model_server: Any, live_app: Any
) -> None:
    command = "for i in $(seq 1 3000); do echo line $i; done"
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": command})]), Reply(text="Counted.")
    )
    app = live_app(yolo=True, max_output=1000)
    async with app.run_test() as pilot:
        await send(pilot, "count")
        await wait_for(pilot, turn_over(app), "the turn ends")
        row = next(iter(app.query(ToolRow)))
        assert "line 3000" in row.output and "line 1500" not in row.output  # the cut copy
        row.focus()
        await pilot.press("ctrl+o")
        await wait_for(pilot, lambda: isinstance(app.screen, OutputViewer), "the viewer opens")
        viewer = app.screen
        assert isinstance(viewer, OutputViewer)
        await settle(pilot)
        assert viewer.text.splitlines() == [f"line {i}" for i in range(1, 3001)]
        assert viewer.note.startswith("the whole output (")
        assert viewer.log_view.is_vertical_scroll_end  # a finished one opens at its end
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, OutputViewer)


async def test_a_running_rows_viewer_shows_the_live_tail(still_app: Any) -> None:
    from mm_tui.agent.events import ToolOutputDelta

    app = still_app()
    async with app.run_test() as pilot:
        await play(pilot, [ToolStarted("r1", "bash", {"command": "make"}, "bash make")])
        await play(pilot, [ToolOutputDelta("r1", "compiling\n")])
        app.transcript.rows["r1"].focus()
        await pilot.press("ctrl+o")
        await settle(pilot)
        viewer = app.screen
        assert isinstance(viewer, OutputViewer) and viewer.live
        await play(pilot, [ToolOutputDelta("r1", "linking\n")])
        assert viewer.log_view.lines[-2:] == ["compiling", "linking"]


async def test_a_paste_while_a_row_has_the_focus_goes_to_the_prompt_and_a_big_one_is_folded(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="Read it."))
    app = live_app()
    big = "".join(f"traceback line {i}\n" for i in range(200))
    async with app.run_test() as pilot:
        await play(pilot, [ToolStarted("x1", "bash", {"command": "ls"}, "bash ls")])
        app.transcript.rows["x1"].focus()
        app.post_message(events.Paste(big))  # as the terminal driver sends it
        await settle(pilot)
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        assert prompt.text == big
        prompt.insert("what broke?")
        await pilot.press("enter")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert [m.text for m in app.query(UserMessage)] == ["[pasted 200 lines]what broke?"]
        assert model_server.requests[0]["messages"][-1]["content"] == big + "what broke?"


async def test_a_long_title_never_pushes_the_status_and_duration_off_the_line(
    still_app: Any,
) -> None:
    from mm_tui.agent.events import ToolFinished, ToolStatus

    title = "bash " + "python -m pytest tests/window -k 'very long selection' " * 4
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await play(
            pilot,
            [
                ToolStarted("t1", "bash", {"command": title[5:]}, title),
                ToolFinished("t1", "bash", title, ToolStatus.DONE, 12.5, "ok\n"),
            ],
        )
        row = app.transcript.rows["t1"]
        line = row.render()
        assert line.cell_length <= row.content_region.width
        assert line.plain.endswith("✓ done 12.5s")
        assert row.tooltip == title  # the whole command is one hover away


async def test_ctrl_g_edits_the_prompt_in_the_editor(
    live_app: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf " and more" >> "$1"\n')
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    app = live_app()
    async with app.run_test() as pilot:
        app.query_one(PromptInput).insert("hello")
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert app.query_one(PromptInput).text == "hello and more"


async def test_an_editor_that_fails_leaves_the_prompt_as_it_was(
    live_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VISUAL", "false")
    app: MMApp = live_app()
    async with app.run_test() as pilot:
        app.query_one(PromptInput).insert("keep me")
        await pilot.press("ctrl+g")
        await settle(pilot)
        assert app.query_one(PromptInput).text == "keep me"
    assert os.environ["VISUAL"] == "false"


async def test_init_asks_the_model_to_write_agents_md(model_server: Any, live_app: Any) -> None:
    from mm_tui.agent.project_instructions import INIT_PROMPT

    model_server.enqueue(Reply(text="I will look around first."))
    app = live_app()
    async with app.run_test() as pilot:
        await send(pilot, "/init")
        await wait_for(pilot, turn_over(app), "the turn ends")
    assert model_server.requests[0]["messages"][-1]["content"] == INIT_PROMPT


async def test_a_terminal_paste_with_carriage_returns_is_folded_too(
    model_server: Any, live_app: Any
) -> None:
    model_server.enqueue(Reply(text="Read it."))
    app = live_app()
    pasted = "".join(f"line {i}\r" for i in range(1, 31))  # as tmux and most terminals send it
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.focused is not None, "the prompt has the focus")
        app.post_message(events.Paste(pasted))
        await settle(pilot)
        app.query_one(PromptInput).insert("why?")
        await pilot.press("enter")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert [m.text for m in app.query(UserMessage)] == ["[pasted 30 lines]why?"]
