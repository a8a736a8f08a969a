"""Keys typed before the window started are read first by Textual's own parser, once.

The path through a real terminal is tests/window/test_window_typeahead.py (tmux)."""

from __future__ import annotations

from typing import Any

import pytest
from textual import events
from textual.drivers.headless_driver import HeadlessDriver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.typeahead_driver import TypeaheadDriver, typed_messages, with_typeahead
from tests.window.conftest import FIXED_CWD


def keys(messages: list[Message]) -> list[str]:
    return [m.key if isinstance(m, events.Key) else type(m).__name__ for m in messages]


def test_typed_keys_become_the_events_textual_makes_of_them() -> None:
    """Enter sends, an arrow is one key, a multi-byte character one character, and a lone Esc
    at the end is not left waiting for the rest of a sequence."""
    messages = typed_messages("hi é\r\x1b[A\x1b")
    assert keys(messages) == ["h", "i", "space", "é", "enter", "up", "escape"]
    assert [m.character for m in messages if isinstance(m, events.Key)][3] == "é"


def test_a_bracketed_paste_typed_early_is_one_paste() -> None:
    [paste] = typed_messages("\x1b[200~line one\rline two\x1b[201~")
    assert isinstance(paste, events.Paste)
    assert paste.text == "line one\rline two"


def test_only_textuals_terminal_driver_reads_the_keys_typed_before() -> None:
    driver = with_typeahead(LinuxDriver, "fix it\r")
    assert issubclass(driver, TypeaheadDriver)
    assert driver.typed == "fix it\r"
    assert with_typeahead(LinuxDriver, "") is LinuxDriver  # nothing typed: Textual's own
    assert with_typeahead(HeadlessDriver, "x") is HeadlessDriver  # TEXTUAL_DRIVER's choice


@pytest.mark.anyio
async def test_the_keys_typed_before_are_read_once_though_the_input_thread_starts_again() -> None:
    """The input thread starts again after a suspension (Ctrl+G's editor, Ctrl+Z): the keys
    typed before the window are not typed a second time."""
    seen: list[Message] = []

    class Recording(with_typeahead(LinuxDriver, "ab\r")):  # type: ignore[misc]
        def process_message(self, message: Message) -> None:
            seen.append(message)

    driver: Any = Recording(MMApp(Config(model="m"), FIXED_CWD))  # a driver needs a loop
    driver.exit_event.set()  # Textual's loop reads nothing more: only the keys typed before
    driver.run_input_thread()
    driver.run_input_thread()
    assert keys(seen) == ["a", "b", "enter", "TypeaheadRead"]  # the trust question waits for it
