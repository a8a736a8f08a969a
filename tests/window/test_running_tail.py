"""A running command shows the tail of its output without a key, and a `!cmd` keeps its output
open: the person should not have to unfold a row to see what is happening or what they ran."""

from __future__ import annotations

from typing import Any

import pytest

from mm_tui.agent.events import (
    PERSON_CALL_PREFIX,
    ToolFinished,
    ToolOutputDelta,
    ToolRunning,
    ToolStarted,
    ToolStatus,
)
from mm_tui.widgets.output_log import OutputLog
from mm_tui.widgets.tool_row import LIVE_TAIL_AFTER
from tests.window.conftest import play, settle

pytestmark = pytest.mark.anyio


class Clock:
    """A clock the test moves by hand: no waiting on real time."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def started(call_id: str, command: str) -> list[Any]:
    title = f"bash {command}"
    return [ToolStarted(call_id, "bash", {"command": command}, title), ToolRunning(call_id, "bash")]


async def test_a_long_command_shows_its_tail_then_folds_when_it_succeeds(still_app: Any) -> None:
    clock = Clock()
    app = still_app(clock=clock)
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, started("c1", "make"))
        row = app.transcript.rows["c1"]
        await play(pilot, [ToolOutputDelta("c1", "compiling a\n")])
        assert not row.expanded  # a quick command never opens
        clock.now += LIVE_TAIL_AFTER
        await play(pilot, [ToolOutputDelta("c1", "compiling b\n")])
        assert row.expanded
        [log] = row.query(OutputLog)
        assert "compiling b" in "\n".join(log.lines)
        await play(pilot, [ToolFinished("c1", "bash", "bash make", ToolStatus.DONE, 2.0, "ok\n")])
        assert not row.expanded  # done: folded again, as a quick one would be


async def test_a_tail_the_person_folded_stays_folded(still_app: Any) -> None:
    clock = Clock()
    app = still_app(clock=clock)
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, started("c1", "make"))
        row = app.transcript.rows["c1"]
        clock.now += LIVE_TAIL_AFTER
        await play(pilot, [ToolOutputDelta("c1", "compiling\n")])
        assert row.expanded
        row.focus()
        await pilot.press("space")
        await settle(pilot)
        assert not row.expanded
        await play(pilot, [ToolOutputDelta("c1", "linking\n")])
        assert not row.expanded


async def test_the_persons_command_keeps_its_output_open(still_app: Any) -> None:
    app = still_app()
    call_id = f"{PERSON_CALL_PREFIX}1"
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, started(call_id, "git status"))
        done = ToolFinished(call_id, "bash", "bash git status", ToolStatus.DONE, 0.1, "clean\n")
        await play(pilot, [ToolOutputDelta(call_id, "clean\n"), done])
        row = app.transcript.rows[call_id]
        assert row.expanded and row.children
