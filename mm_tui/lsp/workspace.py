"""The language-server client as a whole, for synchronous callers (SPEC §4 `lsp`, §6).

A server starts on the first call for one of its extensions, in the project root (or the
nearest folder holding one of its root markers), and is kept for the session; a dead one is
restarted on the next call; `close` stops them all. Calls are synchronous and never raise:
each runs in its caller's thread (which reads the server's answers itself: channel.py) and
comes back as text, honouring a cancel flag meanwhile.
"""

from __future__ import annotations

import atexit
import functools
import logging
import os
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

from mm_tui.lsp import actions
from mm_tui.lsp.actions import ActionContext
from mm_tui.lsp.answers import Answer, Failed, Interrupted, Text
from mm_tui.lsp.call_watch import CallCancelled, CallTooLong, CallWatch
from mm_tui.lsp.connection import ServerConnection, ServerFailure, Timeouts
from mm_tui.lsp.defaults import (
    find_server_root,
    server_for,
    server_label,
    with_documented_defaults,
)
from mm_tui.lsp.diagnostics_action import diagnostics
from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.formatting import display_path
from mm_tui.lsp.query import ACTIONS, POSITIONAL_ACTIONS, LspQuery
from mm_tui.lsp.rename_action import needs_new_name, rename
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.symbols import Occurrence, clean_symbol, find_occurrences, symbol_and_new_name
from mm_tui.lsp.text import counted_lines, shared_lines
from mm_tui.lsp.words import WordRule, rule_for, widened
from mm_tui.support.terminal_text import quoted

UNKNOWN_ACTION = (
    '[lsp: unknown action "{action}" — use definition, references, hover, symbols, '
    "diagnostics or rename]"
)
PATH_NEEDED = '[lsp: "path" is needed: the file to ask about, e.g. "src/main.py"]'
NO_SUCH_FILE = "[lsp: {path} does not exist]"
NOT_A_FILE = "[lsp: {path} is a directory, not a file]"
CANNOT_READ = "[lsp: cannot read {path}: {reason}]"
NO_SERVER = '[lsp: no language server for "{path}" — configured: {configured}]'
COULD_NOT_START = "[lsp: {server}: could not start: {reason}]"
SYMBOL_NOT_FOUND = '[lsp: "{symbol}" not found in {path}]'
SYMBOL_NOT_ON_LINE = '[lsp: "{symbol}" not found on line {line} of {path}]'
LINE_PAST_END = "[lsp: line {line} is past the end of {path} ({count} lines)]"
COLUMN_PAST_END = "[lsp: column {column} is past the end of line {line} ({count} characters)]"
NEGATIVE_POSITION = "[lsp: line and column are 1-based; {field} cannot be {value}]"
SYMBOL_NEEDED = (
    '[lsp: {action} needs "symbol": the identifier as written in {path} '
    "(or a 1-based line and column)]"
)
TOO_LONG = "[lsp: {action} took longer than {seconds:g}s — stopped]"
STOPPED = "[lsp: the language servers were stopped]"
INTERNAL_ERROR = "[lsp: internal error: {error}]"
SERVER_SAID = "[lsp: {server} said: {message}]"

_QUOTES = "`\"'"

log = logging.getLogger(__name__)


class LspWorkspace:
    """Every configured server of one project; thread-safe, one call at a time."""

    def __init__(
        self, specs: Sequence[LspServerSpec], root: Path, timeouts: Timeouts | None = None
    ) -> None:
        # A known server named without settings gets the ones documented for it (defaults.py).
        self.specs = tuple(map(with_documented_defaults, specs))
        self.root = Path(os.path.realpath(root))
        self.timeouts = timeouts or Timeouts()
        self._watch = CallWatch()
        self._by_path: dict[str, LspServerSpec | None] = {}
        self._root_text = str(self.root)
        self._connections: dict[tuple[str, str], ServerConnection] = {}  # by name and root
        self._call_lock = threading.Lock()
        self._disk = DiskTexts()
        self._closed = False
        atexit.register(self.close)  # no server outlives mm-tui, even without an explicit close

    @property
    def call_limit(self) -> float:
        """The outer bound of one call: a cold start, an indexing wait and a few requests."""
        t = self.timeouts
        return t.start + t.indexing + 3 * t.request + t.diagnostics

    def execute(
        self,
        query: LspQuery,
        cancel: threading.Event | None = None,
        before_write: Callable[[Path], None] | None = None,
        shown_diff: str | None = None,
    ) -> Answer:
        """Run one call to its text answer; a rename writes its edits (`before_write` is
        told each file's path first: the agent keeps it for `/undo`). With `shown_diff` (the
        preview the person allowed), a rename whose edits now differ writes nothing."""
        return self._call(query, cancel, True, before_write, shown_diff)

    def preview(self, query: LspQuery, cancel: threading.Event | None = None) -> Answer:
        """What `execute` would answer, writing nothing (a rename returns its diff)."""
        return self._call(query, cancel, False, None)

    def server_pids(self) -> dict[str, int]:
        """The process id of each running server, by name (its process group id too)."""
        return {
            connection.name: connection.pid
            for connection in self._connections.values()
            if connection.alive and connection.pid is not None
        }

    def close(self) -> dict[str, int | None]:
        """Stop every server (shutdown, exit, then the process group) and its readers.

        Returns how each server ended: its exit status (0 after a polite stop; negative: the
        signal that ended it), for a log line or a test.
        """
        if self._closed:
            return {}
        self._closed = True
        atexit.unregister(self.close)
        self._watch.close()  # a call in progress ends at its next look (≤ 50 ms)
        locked = self._call_lock.acquire(timeout=2 * self.timeouts.stop_step)
        if locked:
            self._watch.end()  # no call left to end: the stop's own requests may wait
        try:
            return self._stop_all()
        finally:
            if locked:
                self._call_lock.release()

    # ---- internals -------------------------------------------------------------------------

    def _call(
        self,
        query: LspQuery,
        cancel: threading.Event | None,
        write: bool,
        before_write: Callable[[Path], None] | None,
        shown_diff: str | None = None,
    ) -> Answer:
        if self._closed:
            return Failed(STOPPED)
        with self._call_lock:
            if self._closed:
                return Failed(STOPPED)
            self._watch.begin(cancel, self.call_limit)
            try:
                return self._execute(query, write, before_write, shown_diff)
            except CallCancelled:
                return Failed(STOPPED) if self._closed else Interrupted()
            except CallTooLong:
                return Failed(TOO_LONG.format(action=query.action, seconds=self.call_limit))
            except Exception as error:  # a bug must not take the turn down (SPEC §1)
                log.exception("lsp %s call on %s failed", query.action, query.path)
                return Failed(INTERNAL_ERROR.format(error=f"{type(error).__name__}: {error}"))
            finally:
                self._watch.end()

    def _stop_all(self) -> dict[str, int | None]:
        """Stop every server, each in its own thread (their polite waits overlap)."""
        connections = list(self._connections.values())
        self._connections.clear()
        stoppers = [
            threading.Thread(target=_stop_quietly, args=(c,), name=f"lsp-stop-{c.name}")
            for c in connections
        ]
        for stopper in stoppers:
            stopper.start()
        limit = 6 * self.timeouts.stop_step + self.timeouts.exit_wait + 1
        for stopper in stoppers:
            stopper.join(limit)
        return {c.name: c.process.returncode if c.process else None for c in connections}

    def _server_for(self, path: str) -> LspServerSpec | None:
        """`server_for`, decided once per file (the specs do not change)."""
        try:
            return self._by_path[path]
        except KeyError:
            spec = self._by_path[path] = server_for(Path(path), self.specs)
            return spec

    def _configured(self) -> str:
        return ", ".join(server_label(spec) for spec in self.specs) or "none"

    def _execute(
        self,
        query: LspQuery,
        write: bool,
        before_write: Callable[[Path], None] | None,
        shown_diff: str | None,
    ) -> Text | Failed:
        action = query.action.strip().lower()
        if action not in ACTIONS:
            return Failed(UNKNOWN_ACTION.format(action=quoted(query.action)))
        if not query.path.strip().strip(_QUOTES):
            return Failed(PATH_NEEDED)
        path = _resolved(query.path, self._root_text)  # as text: no pathlib on the warm path
        shown = display_path(path, self._root_text)
        try:
            text = self._disk.read(path)  # the disk is the truth (SPEC §1); stat first
        except FileNotFoundError:
            return Failed(NO_SUCH_FILE.format(path=shown))
        except IsADirectoryError:
            return Failed(NOT_A_FILE.format(path=shown))
        except OSError as error:
            return Failed(CANNOT_READ.format(path=shown, reason=error.strerror))
        spec = self._by_path[path] if path in self._by_path else self._server_for(path)
        if spec is None:
            return Failed(NO_SERVER.format(path=shown, configured=self._configured()))

        targets: tuple[Occurrence, ...] = ()
        symbol = new_name = ""
        rule = rule_for(path)
        if action in POSITIONAL_ACTIONS:
            rule = widened(rule, query.symbol, text) if query.symbol else rule
            if action == "rename":
                symbol, new_name = symbol_and_new_name(query.symbol, query.new_name, rule)
                if not new_name:
                    return Failed(needs_new_name(shown, symbol or query.symbol.strip()))
            else:
                symbol = clean_symbol(query.symbol, rule)
            found = _targets(action, text, shown, symbol, query.line, query.column, rule)
            if isinstance(found, Failed):
                return found
            targets = found

        connection = self._connection_for(spec, path)
        if isinstance(connection, Failed):
            return connection
        asked = _Asked(action, path, shown, text, targets, new_name, rule, query.new_name, symbol)
        try:
            answer = self._ask(connection, asked, write, before_write, shown_diff)
        except ServerFailure as failure:  # the server died while its files were sent
            answer = Failed(
                actions.ACTION_FAILED.format(server=spec.name, action=action, reason=failure)
            )
        return _with_server_errors(answer, connection)

    def _ask(
        self,
        connection: ServerConnection,
        asked: _Asked,
        write: bool,
        before_write: Callable[[Path], None] | None,
        shown_diff: str | None,
    ) -> Text | Failed:
        """Sync the files, then run the action (SPEC §4: before each request, the disk)."""
        action, path, shown, text, targets, new_name, rule, raw_new_name, _ = asked
        spec = connection.spec
        if action in actions.PROVIDERS and not connection.offers(*actions.PROVIDERS[action]):
            return Failed(actions.NOT_OFFERED.format(server=spec.name, action=action))
        document = connection.documents.sync(path, text)
        if connection.documents.refresh(document.key) and not document.changed:
            # Another open file moved (a header this one includes?): a new version of this
            # one makes the server analyse it anew; a server that publishes its diagnostics
            # is heard out first, its answers before that come from the old analysis
            # (clangd's preamble).
            document = connection.documents.sync(path, text, again=True)
            connection.state.wait_for_analysis(
                document.key, document.version, self.timeouts.diagnostics
            )
        context = ActionContext(connection, self.root, path, shown, document, self._root_text)
        context.rule = rule
        context.asked = (asked.symbol, raw_new_name)
        if action == "definition":
            return actions.definition(context, targets)
        if action == "references":
            return actions.references(context, targets)
        if action == "hover":
            return actions.hover(context, targets)
        if action == "symbols":
            return actions.symbols(context)
        if action == "diagnostics":
            return diagnostics(context)
        return rename(
            context, targets, new_name, write=write, before_write=before_write, shown=shown_diff
        )

    def _connection_for(self, spec: LspServerSpec, path: str) -> ServerConnection | Failed:
        """The running server for `path`, started (or restarted, if it died) as needed."""
        root = _server_root(path, self._root_text, spec.root_markers)
        key = (spec.name, root)
        connection = self._connections.get(key)
        if connection is not None and not connection.exited:
            return connection
        if connection is not None:
            del self._connections[key]
            connection.stop()  # reap what is left of the dead one
        connection = ServerConnection(spec, Path(root), self.timeouts, self._disk, self._watch)
        try:
            connection.start()
        except ServerFailure as failure:
            return Failed(COULD_NOT_START.format(server=spec.name, reason=failure))
        self._connections[key] = connection
        return connection


def _with_server_errors(answer: Text | Failed, connection: ServerConnection) -> Text | Failed:
    """The answer, followed by what the server said at error level since the last call, in
    its own words and once: a server that cannot load the project says why (rust-analyzer:
    "is rust-src installed?") where the model would only see an empty answer."""
    errors = connection.state.take_errors()
    if not errors:
        return answer
    said = [SERVER_SAID.format(server=connection.name, message=error) for error in errors]
    text = "\n".join([answer.text, *said])
    return Text(text, answer.diff) if isinstance(answer, Text) else Failed(text)


def _stop_quietly(connection: ServerConnection) -> None:
    try:
        connection.stop()
    except Exception:  # one server's odd end must not keep the others running
        log.exception("stopping %s failed", connection.name)


class _Asked(NamedTuple):
    """What a call asks, once its file is read and its places found."""

    action: str
    path: str
    shown: str
    text: str
    targets: tuple[Occurrence, ...]
    new_name: str
    rule: WordRule
    raw_new_name: str  # as the model wrote it
    symbol: str  # the name asked, cleaned ("" for a line and column)


@functools.lru_cache(maxsize=1024)
def _resolved(raw: str, root: str) -> str:
    """The absolute path a call names (remembered: a pure function of its text and root)."""
    text = os.path.expanduser(raw.strip().strip(_QUOTES).strip())
    return os.path.normpath(os.path.join(root, text))


@functools.lru_cache(maxsize=1024)
def _server_root(path: str, root: str, markers: tuple[str, ...]) -> str:
    """`find_server_root`, decided once per file for the session (as links are: documents.py);
    the servers are keyed by it, so a file never moves from one server to another."""
    return str(find_server_root(Path(path), Path(root), markers))


@functools.lru_cache(maxsize=64)
def _targets(
    action: str, text: str, shown: str, symbol: str, line: int, column: int, rule: WordRule
) -> tuple[Occurrence, ...] | Failed:
    """The places to ask about, in order, or the refusal that explains why there are none.
    Remembered: a pure function of the file's text and the call (a warm call asks again)."""
    for field, value in (("line", line), ("column", column)):
        if value < 0:
            return Failed(NEGATIVE_POSITION.format(field=field, value=value))
    count = counted_lines(text)
    if line > count:
        return Failed(LINE_PAST_END.format(line=line, path=shown, count=count))
    if symbol:
        occurrences = find_occurrences(text, symbol, line - 1 if line else None, rule)
        if not occurrences:
            if line:
                return Failed(SYMBOL_NOT_ON_LINE.format(symbol=symbol, line=line, path=shown))
            return Failed(SYMBOL_NOT_FOUND.format(symbol=symbol, path=shown))
        if line and column:  # the occurrence under the column first, the others after
            occurrences.sort(key=lambda o: not (o.column < column <= o.column + len(symbol)))
        return tuple(occurrences)
    if line and column:
        line_text = shared_lines(text)[line - 1]
        if column > len(line_text):
            return Failed(COLUMN_PAST_END.format(column=column, line=line, count=len(line_text)))
        return (Occurrence(line - 1, column - 1),)
    return Failed(SYMBOL_NEEDED.format(action=action, path=shown))
