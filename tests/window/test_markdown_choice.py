"""`MM_TUI_MARKDOWN=stock` draws answers with Textual's own `Markdown`/`MarkdownStream` and
loads none of mm-tui's own drawing (docs/decisions/0003): the way back when a Textual upgrade
breaks the internals that drawing leans on. (`.ci/run` runs the window's tests with it too.)"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import TypedDict, cast

import pytest

from mm_tui.widgets.markdown_choice import ENV, OWN, STOCK

ROOT = Path(__file__).resolve().parents[2]

#: mm-tui's own drawing of answers: the package and every module of it.
OWN_DRAWING = "mm_tui.widgets.fast_markdown"

STREAM_AN_ANSWER = """
import asyncio, json, sys
from textual.app import App, ComposeResult
from mm_tui.widgets.transcript import Transcript
from mm_tui.widgets.answer_blocks import AnswerBlock

ANSWER = "Steps:\\n\\n- one\\n- two **bold**\\n\\n| a | b |\\n|:--|--:|\\n| 1 | 2 |\\n\\nDone.\\n"

class Window(App[None]):
    def compose(self) -> ComposeResult:
        yield Transcript(preview_lines=5, clock=lambda: 0.0)

async def main() -> None:
    app = Window()
    async with app.run_test(size=(60, 30)) as pilot:
        transcript = app.query_one(Transcript)
        for start in range(0, len(ANSWER), 3):
            await transcript.add_text(ANSWER[start : start + 3])
            await transcript.flush()
            await pilot.pause()
        await transcript.end_message()
        await pilot.pause()
        (answer,) = app.query(AnswerBlock)
        print(json.dumps({
            "class_": type(answer).__name__,
            "source": answer.source,
            "markdown": answer.to_markdown(),
            "loaded": sorted(m for m in sys.modules if m.startswith("mm_tui.widgets.")),
        }))

asyncio.run(main())
"""


class Shown(TypedDict):
    """What the child window printed of its one answer."""

    class_: str
    source: str
    markdown: str
    loaded: list[str]


def _stream_an_answer(choice: str) -> Shown:
    env = {**os.environ, ENV: choice, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", STREAM_AN_ANSWER],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120, check=True,
    )  # fmt: skip
    return cast(Shown, json.loads(done.stdout.strip().splitlines()[-1]))


def test_stock_draws_the_answer_with_textuals_markdown_and_loads_none_of_its_own() -> None:
    shown = _stream_an_answer(STOCK)
    assert shown["class_"] == "AnswerBlock"
    assert shown["source"] == shown["markdown"] + "\n"  # every piece reached Textual's stream
    assert "| 1 | 2 |" in shown["markdown"]
    assert [m for m in shown["loaded"] if m.startswith(OWN_DRAWING)] == []


def test_by_default_the_answer_is_drawn_by_mm_tuis_own_drawing() -> None:
    shown = _stream_an_answer(OWN)
    assert shown["class_"] == "FastAnswerBlock"
    assert "mm_tui.widgets.fast_markdown.answer_stream" in shown["loaded"]
    assert shown["markdown"] == _stream_an_answer(STOCK)["markdown"]


@pytest.mark.parametrize("value", ["", "own", "Stock ", "fancy"])
def test_only_stock_turns_mm_tuis_own_drawing_off(
    value: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from mm_tui.widgets.markdown_choice import stock_markdown

    monkeypatch.setenv(ENV, value)
    monkeypatch.setattr(logging.getLogger("mm_tui"), "propagate", True)  # as the debug log sets it
    with caplog.at_level("WARNING", logger="mm_tui.widgets.markdown_choice"):
        assert stock_markdown() is (value.strip().lower() == STOCK)
    assert ("neither" in caplog.text) is (value == "fancy")
