"""One language server process and the JSON-RPC conversation with it (SPEC §6).

The conversation itself — framing, requests, the server's own messages, one reader at a
time — is channel.py's; here are the process (started in its own group, stopped politely then
by signals, its stderr drained continuously) and what the server told us at `initialize`.
Everything is synchronous: the thread of a call asks and reads the answer itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from lsprotocol import types

from mm_tui.lsp.call_watch import CallCancelled, CallTooLong, CallWatch
from mm_tui.lsp.capabilities import CLIENT_CAPABILITIES
from mm_tui.lsp.channel import AnswerError, Channel, NoAnswerInTime, ServerGone
from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.documents import OpenDocuments
from mm_tui.lsp.encoding_check import Span, announced_encoding, verified_encoding
from mm_tui.lsp.server_requests import ServerRequestHandlers
from mm_tui.lsp.server_state import ServerState
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.text import UTF16
from mm_tui.support.process_group import group_alive, signal_group, wait_group_gone
from mm_tui.support.secret_env import scrubbed_environment
from mm_tui.support.terminal_text import one_line

log = logging.getLogger(__name__)

_STDERR_LINES_KEPT = 40
_STDERR_SETTLE_SECONDS = 0.5  # for a dead server's last stderr lines to arrive
#: At most this many characters of what a server says (an error, a stderr line) go into a
#: failure line: one line, escape sequences dropped, the rest counted.
_SAID_CHARS = 300


def _reap(process: subprocess.Popen[bytes]) -> None:
    """Wait for the server's process to end, so that it never lingers as a zombie."""
    try:
        process.wait()
    except Exception:
        log.debug("waiting for server %s failed", process.pid, exc_info=True)


class ServerFailure(Exception):
    """The server could not answer: an error answer, no answer in time, or it died.

    `final` when asking again is pointless (it died, or it already made us wait a full time
    limit); an error answer about one place may not hold for another.
    """

    def __init__(self, reason: str, *, final: bool = True, code: int | None = None) -> None:
        super().__init__(reason)
        self.final = final
        self.code = code  # the JSON-RPC error code of an error answer


@dataclass(frozen=True)
class Timeouts:
    """Every wait on a server is bounded (SPEC §6); seconds."""

    start: float = 30.0
    request: float = 15.0
    indexing: float = 10.0
    diagnostics: float = 3.0  # SPEC §4: the diagnostics action waits up to 3 s
    #: How long an empty answer about a file the server just received is asked again: it
    #: may not have read it yet (bash-language-server answers 150 ms later, saying nothing).
    fresh_answer: float = 2.0
    stop_step: float = 2.0  # for `shutdown`, then for each signal
    #: After `exit`: the server already cleaned up on `shutdown`; pylsp lingers ~1 s on a lint
    #: thread waiting for an answer it can no longer read, so it is not waited for long.
    exit_wait: float = 0.5


class ServerConnection:
    """A started server: its process, capabilities, open documents, pushed diagnostics."""

    def __init__(
        self,
        spec: LspServerSpec,
        root: Path,
        timeouts: Timeouts,
        disk: DiskTexts | None = None,
        watch: CallWatch | None = None,
    ) -> None:
        self.spec = spec
        self.root = root
        self.timeouts = timeouts
        self.capabilities: dict[str, Any] = {}
        self.encoding = UTF16
        self.disk = disk or DiskTexts()
        self.documents = OpenDocuments(self, self.disk)
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES_KEPT)
        self.state = ServerState(
            self.documents.version_of, lambda: self.exited, self.stderr_tail, self.pump
        )
        self.process: subprocess.Popen[bytes] | None = None
        self.started_at: float | None = None  # time.monotonic() when it answered initialize
        self._watch = watch or CallWatch()
        self._channel: Channel | None = None
        self._stderr_reader: threading.Thread | None = None
        self._initialized = False

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def exited(self) -> bool:
        """Whether the process is known to have ended (a dead server is never asked): its
        stdout closed (the idle reader sees it at once), or it was found ended on the way."""
        channel, process = self._channel, self.process
        return (
            channel is None or channel.closed or process is None or process.returncode is not None
        )

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def start(self) -> None:
        """Spawn the server in its root and initialize it; raises ServerFailure (or what
        the call's watch raises: the server is stopped then too)."""
        try:
            self.process = subprocess.Popen(
                self.spec.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self.root,
                env=scrubbed_environment(),  # no API key or token for a server
                start_new_session=True,  # its own process group: stopped whole, children too
            )
        except OSError as error:
            raise ServerFailure(f"cannot run {self.spec.command[0]}: {error.strerror}") from None
        process = self.process
        assert process.stdin and process.stdout and process.stderr
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, args=(process.stderr,), name=f"lsp-{self.name}-stderr"
        )
        self._stderr_reader.daemon = True
        self._stderr_reader.start()
        # A server killed between calls is reaped at once: no zombie stays until mm-tui
        # exits or the next call (Popen's own lock keeps this wait and stop()'s apart).
        reaper = threading.Thread(target=_reap, args=(process,), name=f"lsp-{self.name}-reaper")
        reaper.daemon = True
        reaper.start()
        handlers = ServerRequestHandlers(self).handlers()
        self._channel = Channel(
            process.stdin.fileno(),
            process.stdout.fileno(),
            handlers,
            self._watch,
            lambda: process.poll() is not None,
            self.name,
            process.pid,
        )
        try:
            result = self.request("initialize", self._initialize_params(), self.timeouts.start)
        except (ServerFailure, CallCancelled, CallTooLong):
            self.stop()
            raise
        self._initialized = True
        self.started_at = time.monotonic()
        self._adopt_capabilities(result if isinstance(result, dict) else {})
        self.notify("initialized", types.InitializedParams())
        if self.spec.settings:
            self.notify("workspace/didChangeConfiguration", {"settings": self.spec.settings})

    def _initialize_params(self) -> types.InitializeParams:
        root_uri = self.root.as_uri()
        return types.InitializeParams(
            process_id=os.getpid(),  # servers watch it and exit if mm-tui dies
            client_info=types.ClientInfo(name="mm-tui"),
            root_uri=root_uri,
            root_path=str(self.root),
            workspace_folders=[types.WorkspaceFolder(uri=root_uri, name=self.root.name)],
            initialization_options=self.spec.initialization_options,
            capabilities=CLIENT_CAPABILITIES,
        )

    def _adopt_capabilities(self, result: dict[str, Any]) -> None:
        """Read the initialize answer leniently: only the few fields the actions need."""
        capabilities = result.get("capabilities")
        self.capabilities = capabilities if isinstance(capabilities, dict) else {}
        server_info = result.get("serverInfo")
        server_name = server_info.get("name", "") if isinstance(server_info, dict) else ""
        self.state.expect_scan(server_name, self.spec.command[0])
        negotiated = self.capabilities.get("positionEncoding")
        self.encoding = announced_encoding(negotiated, server_name, self.spec.command[0])

    def check_encoding(self, spans: Iterable[Span], name: str) -> bool:
        """Adopt the encoding the server really counts in, if its answer shows another one
        (encoding_check.py); True when it changed."""
        better = verified_encoding(spans, name, self.encoding)
        if better is None:
            return False
        log.info("%s counts columns in %s, not %s: adopted", self.name, better, self.encoding)
        self.encoding = better
        return True

    @property
    def young(self) -> bool:
        """Started less than an indexing time limit ago: it may still be loading unsaid."""
        started = self.started_at
        return started is not None and time.monotonic() - started < self.timeouts.indexing

    def stop(self) -> None:
        """`shutdown`, `exit`, then the process group; each step under a time limit."""
        process = self.process
        if process is None:
            return
        step = self.timeouts.stop_step
        if self._initialized and not self.exited:
            # The polite way, for a server that got as far as answering `initialize`.
            with contextlib.suppress(ServerFailure, CallCancelled, CallTooLong):
                self.request("shutdown", None, step)
            try:
                self.notify("exit", None)
            except (ServerFailure, CallCancelled, CallTooLong):
                log.debug("%s: exit notification not sent", self.name, exc_info=True)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(self.timeouts.exit_wait)
        for sent in (signal.SIGTERM, signal.SIGKILL):
            if not group_alive(process.pid):
                break
            signal_group(process.pid, sent)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(step / 2)
            wait_group_gone(process.pid, step / 2)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(step)
        if self._channel is not None:
            self._channel.stop()
        for pipe in (process.stdin, process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self._stderr_reader is not None:
            self._stderr_reader.join(_STDERR_SETTLE_SECONDS)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        """Drain stderr continuously: a server blocked on a full pipe answers nothing."""
        with contextlib.suppress(OSError, ValueError):
            for line in iter(lambda: stream.readline(65536), b""):
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
        with contextlib.suppress(OSError):
            stream.close()

    def exit_reason(self) -> str:
        """Why the server is gone, in words, with the last lines it wrote."""
        process = self.process
        code = None
        if process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                code = process.wait(_STDERR_SETTLE_SECONDS)  # its stdout closed: it is ending
        if self._stderr_reader is not None:
            self._stderr_reader.join(_STDERR_SETTLE_SECONDS)  # its last words
        if code is None:
            reason = "the server is not running"
        elif code < 0:
            reason = f"the server was killed by signal {-code}"
        else:
            reason = f"the server exited with status {code}"
        return reason + self.stderr_excerpt()

    def stderr_excerpt(self) -> str:
        lines = [one_line(line, _SAID_CHARS) for line in self.stderr_tail if line.strip()][-3:]
        return f" (stderr: {' | '.join(lines)})" if lines else ""

    # ---- messages --------------------------------------------------------------------------

    def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """Send a request and read its answer as plain JSON; raises ServerFailure.

        Without `timeout`, the request limit, stretched once by the indexing limit when it
        falls while the server says it is loading (typescript-language-server began
        "Initializing JS/TS language features" after our first request and took over 15 s
        on a loaded machine); `initialize` and `shutdown` give their own limit.
        """
        channel = self._channel
        if channel is None or channel.closed:  # a process that ended is found on the way
            raise ServerFailure(self.exit_reason())
        limit = self.timeouts.request if timeout is None else timeout
        grace = self.timeouts.indexing if timeout is None else 0.0
        try:
            return channel.request(method, params, limit, grace, self._loading)
        except AnswerError as error:
            reason = one_line(error.message, _SAID_CHARS)  # a server's words: one short line
            raise ServerFailure(reason, final=False, code=error.code) from None
        except NoAnswerInTime as late:
            raise ServerFailure(str(late)) from None
        except ServerGone:
            raise ServerFailure(self.exit_reason()) from None

    def _loading(self) -> bool:
        return self.state.loading

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (fire and forget); raises ServerFailure when it cannot go."""
        channel = self._channel
        if channel is None:
            raise ServerFailure(self.exit_reason())
        try:
            channel.notify(method, params)
        except ServerGone:
            raise ServerFailure(self.exit_reason()) from None

    def pump(self, timeout: float) -> None:
        """Read and handle what the server says for up to `timeout` (ServerState's waits)."""
        channel = self._channel
        if channel is None or channel.closed:
            time.sleep(min(timeout, 0.05))
            return
        channel.pump(timeout)

    def registered_options(self, method: str) -> list[Any]:
        """The options of each registration of `method` in effect (documents.py's didSave)."""
        return self.state.options_of(method)

    def offers(self, provider: str, method: str) -> bool:
        """Whether the server announced a capability (`renameProvider`) or registered its
        method (`textDocument/rename`) since."""
        value = self.capabilities.get(provider)
        return (value is not None and value is not False) or self.state.registered(method)
