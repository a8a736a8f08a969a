"""The window reads the keys typed before it started first, as if it had read them itself.

`mm_tui.support.typeahead.keys_kept` takes what the kernel had cooked before the window could
read keys out of the terminal's queue (there is no putting them back: TIOCSTI is off on recent
kernels). Textual's terminal driver reads and parses stdin in its input thread; this driver
parses those keys with the same parser in that thread before its first read, so they reach the
window ahead of anything typed later, and an escape sequence (an arrow), a multi-byte character
or a paste means what it would have meant typed after the first frame. `TypeaheadRead` follows
them: a question the window opens at start waits for it (they were typed blind, for the prompt).
"""

from __future__ import annotations

import logging

from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

log = logging.getLogger(__name__)


def typed_messages(typed: str) -> list[Message]:
    """The key (and paste) events Textual makes of `typed`, a lone Escape at its end included
    (the parser is told the input ended, as it is at the window's close)."""
    if not typed:
        return []
    from mm_tui.widgets.textual_private import XTermParser  # the driver's own key parser

    parser = XTermParser()
    return [*parser.feed(typed), *parser.feed("")]


class TypeaheadRead(Message):
    """The keys typed before the window started are all in the app's queue, ahead of this."""


class TypeaheadDriver(LinuxDriver):
    """Textual's terminal driver, which reads `typed` before the terminal (once: the input
    thread starts again after a suspension), then posts `TypeaheadRead`."""

    typed = ""

    def run_input_thread(self) -> None:
        typed, self.typed = self.typed, ""
        if typed:
            for message in typed_messages(typed):
                self.process_message(message)
            self.process_message(TypeaheadRead())
        super().run_input_thread()


def with_typeahead(driver_class: type[Driver], typed: str) -> type[Driver]:
    """The driver to run the window with when `typed` was typed before it started. Another
    driver than Textual's terminal one (TEXTUAL_DRIVER, for `serve`) is kept as it is."""
    if not typed:
        return driver_class
    if driver_class is not LinuxDriver:
        log.debug("keys typed before the window are dropped: %s reads the input", driver_class)
        return driver_class
    return type("TypeaheadDriver", (TypeaheadDriver,), {"typed": typed})
