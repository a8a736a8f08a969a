"""The `@` file picker and the full output viewer, driven by keys as a person does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input, Log, OptionList, Static

from mm_tui.support.file_index import FileIndex
from mm_tui.widgets.file_picker import FilePicker
from mm_tui.widgets.output_viewer import OutputViewer
from tests.window.conftest import settle, wait_for

pytestmark = pytest.mark.anyio


def make_project(root: Path) -> Path:
    for rel in ("src/greeter.py", "tests/test_greeter.py", "README.md", "build/junk.py"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)
    (root / ".gitignore").write_text("build/\n")
    return root


async def test_the_file_picker_filters_as_you_type_and_enter_returns_the_path(
    still_app: Any, tmp_path: Path
) -> None:
    root = make_project(tmp_path / "project")
    app = still_app()
    picked: list[str | None] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(FilePicker(root), picked.append)
        screen = app.screen
        assert isinstance(screen, FilePicker)
        await wait_for(pilot, lambda: screen.index is not None, "the project listed")
        options = screen.query_one(OptionList)
        shown = [options.get_option_at_index(i).id for i in range(options.option_count)]
        assert "build/junk.py" not in shown  # .gitignore honoured
        await pilot.press("t", "g", "r")
        await settle(pilot)
        assert options.get_option_at_index(0).id == "tests/test_greeter.py"
        await pilot.press("down", "up", "enter")
        await settle(pilot)
    assert picked == ["tests/test_greeter.py"]


async def test_esc_closes_the_file_picker_with_nothing_picked(
    still_app: Any, tmp_path: Path
) -> None:
    root = make_project(tmp_path / "project")
    app = still_app()
    picked: list[str | None] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.push_screen(FilePicker(root, index=FileIndex(root)), picked.append)
        await settle(pilot)
        await pilot.press("z", "z", "z")
        await settle(pilot)
        assert str(app.screen.query_one("#file-note", Static).render()) == "no file matches"
        await pilot.press("escape")
        await settle(pilot)
    assert picked == [None]


LONG_OUTPUT = "".join(f"line {i}{' ERROR here' if i in (41, 181) else ''}\n" for i in range(1, 301))


async def test_the_viewer_opens_at_the_end_and_search_walks_the_matches(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = OutputViewer("bash pytest -q tests/ --maxfail=1", LONG_OUTPUT)
        await app.push_screen(viewer)
        await settle(pilot)
        log = viewer.query_one(Log)
        assert log.line_count == 300  # the final newline opens no empty line
        assert log.is_vertical_scroll_end
        await pilot.press("slash")
        for char in "error":
            await pilot.press(char)
        await pilot.press("enter")
        await settle(pilot)
        status = viewer.query_one("#viewer-status", Static)
        assert str(status.render()) == "match 1 of 2 (line 41)"
        assert log.scroll_y <= 40 < log.scroll_y + log.scrollable_content_region.height
        await pilot.press("escape")  # closes the search field, not the viewer
        await pilot.press("n")
        await settle(pilot)
        assert str(status.render()) == "match 2 of 2 (line 181)"
        await pilot.press("N")
        await settle(pilot)
        assert str(status.render()) == "match 1 of 2 (line 41)"
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is not viewer


async def test_a_search_with_no_match_says_so(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = OutputViewer("bash ls", "a\nb\n")
        await app.push_screen(viewer)
        await pilot.press("ctrl+f", "x", "y", "enter")
        await settle(pilot)
        status = str(viewer.query_one("#viewer-status", Static).render())
        assert status == "no line holds 'xy'"


async def test_a_live_viewer_follows_new_output_at_the_end(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = OutputViewer("bash make", LONG_OUTPUT, live=True)
        await app.push_screen(viewer)
        await settle(pilot)
        viewer.append("compiling part")
        viewer.append(" two\nlinking\n")
        await settle(pilot)
        log = viewer.query_one(Log)
        assert log.lines[-2:] == ["compiling part two", "linking"]
        assert log.is_vertical_scroll_end


async def test_the_search_field_takes_n_and_q_as_letters(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = OutputViewer("bash cat", "queen\nnothing\n")
        await app.push_screen(viewer)
        await pilot.press("slash", "q", "n")
        await settle(pilot)
        assert viewer.query_one("#viewer-search", Input).value == "qn"
        assert app.screen is viewer


async def test_after_enter_n_goes_to_the_next_match_and_types_nothing(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(80, 24)) as pilot:
        viewer = OutputViewer("bash cat", "one\nnone\ntwo\nno more\n")
        await app.push_screen(viewer)
        await pilot.press("slash", "n", "o", "enter")
        await settle(pilot)
        status = viewer.query_one("#viewer-status", Static)
        first = str(status.render())
        await pilot.press("n")
        await settle(pilot)
        assert viewer.query_one("#viewer-search", Input).value == "no"  # nothing typed
        assert str(status.render()) != first and "2" in str(status.render())
        await pilot.press("N")
        await settle(pilot)
        assert str(status.render()) == first
        assert app.screen is viewer


def test_snapshot_the_output_viewer_searching(snap_compare: Any, still_app: Any) -> None:
    async def run_before(pilot: Any) -> None:
        title = "bash pytest -q tests/window --maxfail=1 -k 'viewer or picker' " + "-x " * 30
        await pilot.app.push_screen(
            OutputViewer(
                title, LONG_OUTPUT, note="the model got the first 10,000 characters", blink=False
            )
        )
        await pilot.press("slash", "E", "R", "R", "O", "R", "enter")
        await settle(pilot)

    assert snap_compare(still_app(), terminal_size=(90, 24), run_before=run_before)


def test_snapshot_the_file_picker(snap_compare: Any, still_app: Any, tmp_path: Path) -> None:
    root = make_project(tmp_path / "project")

    async def run_before(pilot: Any) -> None:
        picker = FilePicker(root, index=FileIndex(root), query="gree", blink=False)
        await pilot.app.push_screen(picker)
        note = picker.query_one("#file-note", Static)
        await wait_for(pilot, lambda: str(note.render()) == "2 shown of 4 files", "the matches")

    assert snap_compare(still_app(), terminal_size=(90, 24), run_before=run_before)
