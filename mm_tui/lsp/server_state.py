"""What a server told us unasked: diagnostics, progress, registrations, its scan's end.

Kept apart from the process and its pipes (connection.py) because the actions read it to
decide when a server is ready and what it offers. A wait reads the server itself (`pump`:
the waiting thread is the channel's reader) and looks again after each message, so it ends
the moment the awaited news arrives, never on a poll (SPEC §6: bounded waits).
"""

from __future__ import annotations

import logging
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.lsp.documents import NotAFile, path_of_uri
from mm_tui.support.terminal_text import one_line

log = logging.getLogger(__name__)

#: Servers that list the project's files after `initialized` without a progress report, and
#: the log line that says they are done: before it, references see only the open files.
#: Keyed by `serverInfo` name and by command: pyright sends no `serverInfo` at all.
_PROJECT_SCAN_DONE = {
    name: re.compile(r"^(Found \d+ source files?|No source files found)")
    for name in ("basedpyright", "pyright", "basedpyright-langserver", "pyright-langserver")
}


#: How long an unversioned publication that came first after a change is doubted: it may be
#: a late word about the earlier text (typescript-language-server was seen to send one).
#: It is believed once this long passed with nothing newer, or at once when another follows.
DOUBT_SECONDS = 0.5

_ERRORS_KEPT = 3
_SAID_CHARS = 300


def _said(message: str) -> str:
    """A server's message as one line: its stack frames dropped, at most 300 characters."""
    lines = [line.strip() for line in message.splitlines()]
    kept = [line for line in lines if line and not line.startswith("at ")]
    return one_line(" ".join(kept), _SAID_CHARS)


@dataclass(frozen=True)
class Publication:
    """Diagnostics a server pushed for one file, and which of our versions they followed."""

    diagnostics: list[dict[str, Any]]
    version: int | None
    after_version: int
    #: Until when (monotonic) it is doubted: no version, and the first word since a change.
    doubted_until: float = 0.0


@dataclass(frozen=True)
class Registration:
    """One `client/registerCapability` entry, kept under its id: a server may register one
    method twice and unregister one of the two (pyright does, for pull diagnostics)."""

    method: str
    options: Any


class ServerState:
    """The news of one server, and bounded waits on it."""

    def __init__(
        self,
        version_of: Callable[[str], int],
        gone: Callable[[], bool],
        log_tail: deque[str],
        pump: Callable[[float], None] = time.sleep,
    ) -> None:
        """`pump(timeout)` reads and handles the server's messages for up to `timeout`
        seconds, returning after the first ones (the connection's); without a server, sleep."""
        self._version_of = version_of
        self._gone = gone
        self._log_tail = log_tail
        self._pump = pump
        self.publications: dict[str, Publication] = {}
        self.registrations: dict[str, Registration] = {}
        self._progress: set[str | int] = set()
        #: How many progress reports ever began: an answer that came while this moved was
        #: given while the server loaded, even when the report ended before it was read.
        self.progress_begun = 0
        #: The server asked for a progress token: it reports its loading (else it never says).
        self.progress_created = False
        #: The server was seen to check a file only when it is opened or saved (fortls): a
        #: changed file is closed and opened again before its diagnostics are awaited.
        self.checks_only_on_open = False
        self._scan_done: re.Pattern[str] | None = None  # set while a project scan is pending
        #: The scan's end said it found no source file, though a call asks about one: the
        #: server does not see the project (basedpyright under a folder named with "?").
        self.scan_found_nothing = False
        self._news = 0  # counts every piece of news, for `wait_for_news`
        self._wake_at = 0.0  # when a doubted publication comes to be believed (monotonic)
        #: What the server said at error level (`window/showMessage`, `logMessage`), each
        #: passed to the model once (rust-analyzer: "failed to load workspace").
        self._errors: list[str] = []
        self._errors_said: set[str] = set()

    def expect_scan(self, server_name: str, command: str) -> None:
        """Wait for this server's end-of-scan log line, when it is one known to print it."""
        self._scan_done = _PROJECT_SCAN_DONE.get(server_name.lower()) or _PROJECT_SCAN_DONE.get(
            Path(command).name
        )

    @property
    def loading(self) -> bool:
        """Whether the server said it is still loading: progress open or its scan pending."""
        return bool(self._progress) or self._scan_done is not None

    @property
    def speaks_progress(self) -> bool:
        """Whether this server reports its loading as progress: one that never did is not
        waited for on a clock, its answers are believed (a CSS server's one-file answer)."""
        return self.progress_created or self.progress_begun > 0

    def loading_since(self, mark: int) -> bool:
        """Whether the server is loading, or began loading since `progress_begun` was `mark`:
        clangd begins its background index just after the first request, and may end it
        before the answer given from the partial index is read."""
        return self.loading or self.progress_begun != mark

    def registered(self, method: str) -> bool:
        # A copy first: between calls the channel's idle reader may register meanwhile.
        return any(entry.method == method for entry in list(self.registrations.values()))

    def options_of(self, method: str) -> list[dict[str, Any]]:
        """The options of each registration of `method` still in effect ({} when it gave
        none), in the order they came."""
        return [
            entry.options if isinstance(entry.options, dict) else {}
            for entry in list(self.registrations.values())
            if entry.method == method
        ]

    def signal_change(self) -> None:
        """Count a piece of news: a waiter looking for any news stops waiting."""
        self._news += 1

    # ---- news ------------------------------------------------------------------------------

    def record_publication(self, params: dict[str, Any]) -> None:
        uri = params.get("uri")
        diagnostics = params.get("diagnostics")
        if not isinstance(uri, str) or not isinstance(diagnostics, list):
            return
        try:
            key = str(path_of_uri(uri))
        except NotAFile:
            log.debug("diagnostics for %r were dropped: not a file", uri)
            return
        version = params.get("version")
        version = version if isinstance(version, int) else None
        after_version = self._version_of(key)
        earlier = self.publications.get(key)
        doubted_until = 0.0
        if version is None and earlier is not None and earlier.after_version < after_version:
            doubted_until = time.monotonic() + DOUBT_SECONDS
            self._wake_at = doubted_until
        self.publications[key] = Publication(
            diagnostics=[d for d in diagnostics if isinstance(d, dict)],
            version=version,
            after_version=after_version,
            doubted_until=doubted_until,
        )
        self.signal_change()

    def record_progress(self, params: dict[str, Any]) -> None:
        token, value = params.get("token"), params.get("value")
        if not isinstance(value, dict) or not isinstance(token, str | int):
            return
        if value.get("kind") == "begin":
            self._progress.add(token)
            self.progress_begun += 1
        elif value.get("kind") == "end":
            self._progress.discard(token)
        self.signal_change()

    def record_log(self, message: str) -> None:
        """A `window/logMessage` line: kept for failure reports, watched for a scan's end."""
        self._log_tail.append(message.rstrip())
        if self._scan_done is not None and self._scan_done.match(message):
            self._scan_done = None
            self.scan_found_nothing = message.startswith("No source files")
            self.signal_change()

    def record_error(self, message: str) -> None:
        """An error the server said in its own words: kept until a call passes it on."""
        said = _said(message)
        if said and said not in self._errors_said and len(self._errors) < _ERRORS_KEPT:
            self._errors_said.add(said)
            self._errors.append(said)

    @property
    def has_errors(self) -> bool:
        """Whether the server said an error that no call passed on yet."""
        return bool(self._errors)

    def take_errors(self) -> list[str]:
        """The server's errors not passed on yet (each passed once per session)."""
        errors, self._errors = self._errors, []
        return errors

    def register(self, registration_id: str, method: str, options: Any) -> None:
        self.registrations[registration_id] = Registration(method, options)
        self.signal_change()

    def unregister(self, registration_id: str, method: str) -> None:
        entry = self.registrations.get(registration_id)
        if entry is not None and entry.method == method:
            del self.registrations[registration_id]
        else:
            log.debug("unregistration of unknown %s (%s) ignored", registration_id, method)
        self.signal_change()

    # ---- waits -----------------------------------------------------------------------------

    def wait_until(self, condition: Callable[[], bool], timeout: float) -> bool:
        """Wait (bounded) until `condition()` holds; False when time ran out or it died."""
        deadline = time.monotonic() + timeout
        while not condition():
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0 or self._gone():
                return False
            if self._wake_at > now:  # a doubt ends then: look again, even if nothing comes
                remaining = min(remaining, self._wake_at - now)
            self._pump(remaining)
        return True

    def wait_for_news(self, timeout: float) -> None:
        """Wait (bounded) for the next piece of news, whatever it is."""
        news = self._news
        self.wait_until(lambda: self._news != news, timeout)

    def publication_for(self, key: str, version: int) -> Publication | None:
        """The latest publication for `key` if it follows our `version` of the file."""
        publication = self.publications.get(key)
        if publication is None or publication.after_version < version:
            return None
        if publication.version is not None and publication.version < version:
            return None  # a late answer about an older content (pylsp's debounced lint)
        if publication.doubted_until > time.monotonic():
            return None  # maybe about the earlier text: believed if nothing newer comes
        return publication

    def wait_for_analysis(self, key: str, version: int, timeout: float) -> None:
        """Wait (bounded) for the diagnostics of `version` of a file, when this server
        published for it before: the sign its analysis of that version is done."""
        if key in self.publications:
            self.wait_until(lambda: self.publication_for(key, version) is not None, timeout)

    def wait_until_indexed(self, timeout: float) -> None:
        """Wait (bounded) until the server knows the project's files and every progress it
        began has ended: queries asked earlier miss files or get half answers (SPEC §6)."""
        if self.loading:
            self.wait_until(lambda: not self.loading, timeout)
            self._scan_done = None  # its end line never came (another wording?): wait only once
