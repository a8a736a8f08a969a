"""Snapshot tests of the window (SVGs in the top-level `snapshots/` folder).

Deterministic: a fixed clock, no cursor blink, no animation, no spinner motion. Update with
`python -m pytest tests/window --snapshot-update` and look at the SVGs before committing.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from textual.pilot import Pilot

from mm_tui.agent.events import PermissionAnswer
from mm_tui.widgets.markdown_choice import ENV, STOCK
from tests.window import window_scenes as scenes
from tests.window.conftest import play, wait_for


def scene(events: list[Any], *, open_rows: tuple[str, ...] = ()) -> Any:
    """A `run_before` that plays events, then opens the named rows."""

    async def run_before(pilot: Pilot[Any]) -> None:
        await play(pilot, events)
        for call_id in open_rows:
            pilot.app.transcript.rows[call_id].expanded = True
        await play(pilot, [])

    return run_before


def test_the_empty_window(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(still_app(), terminal_size=(80, 24))


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
def test_a_streamed_answer_with_code(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(100, 30), run_before=scene(scenes.streamed_answer())
    )


def test_a_streamed_answer_with_code_in_textuals_stock_markdown(
    snap_compare: Any, still_app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same answer with `MM_TUI_MARKDOWN=stock`: Textual's own Markdown and MarkdownStream
    draw it (docs/decisions/0003), the way back when a Textual upgrade breaks mm-tui's own."""
    monkeypatch.setenv(ENV, STOCK)
    assert snap_compare(
        still_app(), terminal_size=(100, 30), run_before=scene(scenes.streamed_answer())
    )


def test_a_running_row_with_its_spinner_state(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(),
        terminal_size=(100, 20),
        run_before=scene(scenes.running_row(), open_rows=("run1",)),
    )


def test_finished_rows_in_every_status(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(),
        terminal_size=(110, 36),
        run_before=scene(scenes.finished_rows_in_every_status()),
    )


def test_a_permission_question(snap_compare: Any, still_app: Any) -> None:
    future: Future[PermissionAnswer] = Future()
    assert snap_compare(
        still_app(), terminal_size=(100, 20), run_before=scene(scenes.permission_question(future))
    )


def test_an_edit_diff(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(),
        terminal_size=(100, 24),
        run_before=scene(scenes.edit_with_diff(), open_rows=("edit1",)),
    )


def test_an_lsp_row(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(),
        terminal_size=(100, 16),
        run_before=scene(scenes.lsp_row(), open_rows=("lsp1",)),
    )


def test_a_turn_summary(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(100, 16), run_before=scene(scenes.turn_summary())
    )


def test_a_server_error(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(100, 16), run_before=scene(scenes.server_error())
    )


def test_the_help_screen(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(still_app(), terminal_size=(100, 30), press=["f1"])


def test_markup_escapes_and_huge_outputs_shown_literally(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(100, 40), run_before=scene(scenes.hostile_text())
    )


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
def test_an_80_by_24_terminal(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(80, 24), run_before=scene(scenes.a_conversation())
    )


@pytest.mark.usefixtures("own_markdown")  # mm-tui's own drawing (fast_answer.py)
def test_a_160_by_50_terminal(snap_compare: Any, still_app: Any) -> None:
    assert snap_compare(
        still_app(), terminal_size=(160, 50), run_before=scene(scenes.a_conversation())
    )


def test_repaired_calls_show_their_badge_and_the_raw_text_one_key_away(
    snap_compare: Any, still_app: Any
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await play(pilot, scenes.repaired_calls())
        pilot.app.transcript.rows["fix1"].focus()
        await pilot.press("v")
        await play(pilot, [])

    assert snap_compare(still_app(), terminal_size=(110, 24), run_before=run_before)


def _sessions() -> list[Any]:
    """Four sessions of one directory, one of them the current, one written elsewhere."""
    from pathlib import Path

    from mm_tui.agent.session_index import SessionInfo

    day = 1_764_662_400.0  # 2025-12-02 08:00 UTC
    rows = [
        ("s4", "add a --verbose flag to the CLI and test it", 14, 9_800, 3 * 3600, False),
        ("s3", "why does greet('') raise IndexError?", 6, 3_100, 2 * 3600, True),
        (
            "s2",
            "explain \x1b[31mthis\x1b[0m traceback from the nightly build",
            31,
            48_200,
            900,
            False,
        ),
        ("s1", "", 1, 412, 0, False),
    ]
    return [
        SessionInfo(
            i, "/home/dev/greeter", day, first, n, day + at, Path(f"/s/{i}.jsonl"), size, busy
        )
        for i, first, n, size, at, busy in rows
    ]


def test_the_session_picker(snap_compare: Any, still_app: Any) -> None:
    import time

    from mm_tui.widgets.session_picker import SessionPicker

    async def run_before(pilot: Pilot[Any]) -> None:
        def utc(stamp: float) -> str:
            return time.strftime("%Y-%m-%d %H:%M", time.gmtime(stamp))

        await pilot.app.push_screen(SessionPicker(_sessions(), "s4", when=utc, blink=False))
        screen = pilot.app.screen
        await wait_for(
            pilot, lambda: bool(str(screen.query_one("#session-note").render())), "listed"
        )

    assert snap_compare(still_app(), terminal_size=(110, 20), run_before=run_before)


def test_the_command_palette(snap_compare: Any, still_app: Any) -> None:
    from textual.command import CommandInput, CommandList, CommandPalette

    async def run_before(pilot: Pilot[Any]) -> None:
        app = pilot.app
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: CommandPalette.is_open(app), "the palette opens")
        app.screen.query_one(CommandInput).cursor_blink = False
        commands = len(list(app.get_system_commands(app.screen)))
        listed = app.screen.query_one(CommandList)
        await wait_for(pilot, lambda: listed.option_count == commands, "every command is listed")
        await play(pilot, [])

    assert snap_compare(still_app(), terminal_size=(100, 30), run_before=run_before)
