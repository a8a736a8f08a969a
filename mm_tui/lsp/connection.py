"""One language server process and the JSON-RPC conversation with it, on an asyncio loop.

pygls carries the conversation (framing, request futures, dispatch of the server's own
requests); lsprotocol types the messages we send. Everything here runs on the loop of
`mm_tui.lsp.loop.LoopThread`; the synchronous world reaches it through `LspWorkspace`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.io_ import run_async

from mm_tui.lsp.capabilities import CLIENT_CAPABILITIES
from mm_tui.lsp.disk import DiskTexts
from mm_tui.lsp.documents import OpenDocuments
from mm_tui.lsp.encoding_check import Span, announced_encoding, verified_encoding
from mm_tui.lsp.raw_protocol import AnswerError, RawJsonProtocol
from mm_tui.lsp.server_requests import ServerRequestHandlers
from mm_tui.lsp.server_state import ServerState
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.text import UTF16
from mm_tui.support.process_group import group_alive, signal_group, wait_group_gone
from mm_tui.support.secret_env import scrubbed_environment

# pygls reports server oddities through `logging`; with no handler at all Python would print
# them on the terminal, under the window. The application decides where logs go.
logging.getLogger("pygls").addHandler(logging.NullHandler())
log = logging.getLogger(__name__)

_STDERR_LINES_KEPT = 40


class _NoAnswerInTime(Exception):
    """A request's time limit passed (set on its future by the timer)."""


class _ServerGone(Exception):
    """The process ended with the request unanswered (set by the exit watcher)."""


class _Deadline:
    """A request's time limit, stretched once by `grace` when it comes while the server says
    it is still loading (progress open): a server holds its first request behind a project's
    load (typescript-language-server began "Initializing JS/TS language features" after our
    first request and took over 15 s on a loaded machine). Sets _NoAnswerInTime when due."""

    def __init__(
        self, answer: asyncio.Future[Any], limit: float, grace: float, loading: Callable[[], bool]
    ) -> None:
        self._answer, self._grace, self._loading = answer, grace, loading
        self.waited = limit
        self._handle = asyncio.get_running_loop().call_later(limit, self._due)

    def _due(self) -> None:
        if self._answer.done():
            return
        if self._grace > 0 and self._loading():
            self.waited += self._grace
            self._handle = asyncio.get_running_loop().call_later(self._grace, self._due)
            self._grace = 0.0
            return
        self._answer.set_exception(_NoAnswerInTime())

    def cancel(self) -> None:
        self._handle.cancel()


class ServerFailure(Exception):
    """The server could not answer: an error answer, no answer in time, or it died.

    `final` when asking again is pointless (it died, or it already made us wait a full time
    limit); an error answer about one place may not hold for another.
    """

    def __init__(self, reason: str, *, final: bool = True) -> None:
        super().__init__(reason)
        self.final = final


@dataclass(frozen=True)
class Timeouts:
    """Every wait on a server is bounded (SPEC §6); seconds."""

    start: float = 30.0
    request: float = 15.0
    indexing: float = 10.0
    diagnostics: float = 3.0  # SPEC §4: the diagnostics action waits up to 3 s
    stop_step: float = 2.0  # for `shutdown`, then for each signal
    #: After `exit`: the server already cleaned up on `shutdown`; pylsp lingers ~1 s on a lint
    #: thread waiting for an answer it can no longer read, so it is not waited for long.
    exit_wait: float = 0.5


class ServerConnection:
    """A started server: its process, capabilities, open documents, pushed diagnostics."""

    def __init__(
        self, spec: LspServerSpec, root: Path, timeouts: Timeouts, disk: DiskTexts | None = None
    ) -> None:
        self.spec = spec
        self.root = root
        self.timeouts = timeouts
        self.capabilities: dict[str, Any] = {}
        self.encoding = UTF16
        self.disk = disk or DiskTexts()
        self.documents = OpenDocuments(self, self.disk)
        self.stderr_tail: deque[str] = deque(maxlen=_STDERR_LINES_KEPT)
        self.state = ServerState(self.documents.version_of, lambda: self.exited, self.stderr_tail)
        self.process: asyncio.subprocess.Process | None = None
        self.started_at: float | None = None  # time.monotonic() when it answered initialize
        self._client = JsonRPCClient(protocol_cls=RawJsonProtocol)
        protocol = self._client.protocol
        assert isinstance(protocol, RawJsonProtocol)
        self._protocol = protocol
        self._ids = itertools.count(1)
        self._stop_reading = threading.Event()
        self._tasks: list[asyncio.Task[Any]] = []
        self._exited: asyncio.Future[None] | None = None  # resolved when the process ends
        self._initialized = False
        self._stderr_task: asyncio.Task[None] | None = None
        ServerRequestHandlers(self).register(self._client)

    # ---- lifecycle -------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.returncode is None

    @property
    def exited(self) -> bool:
        """Whether the process is known to have ended (a dead server is never asked)."""
        return self._exited is None or self._exited.done()

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def start(self) -> None:
        """Spawn the server in its root and initialize it; raises ServerFailure."""
        try:
            self.process = await asyncio.create_subprocess_exec(
                *self.spec.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.root,
                env=scrubbed_environment(),  # no API key or token for a server (issue 11)
                start_new_session=True,  # its own process group: stopped whole, children too
            )
        except OSError as error:
            raise ServerFailure(f"cannot run {self.spec.command[0]}: {error.strerror}") from None
        assert self.process.stdin and self.process.stdout and self.process.stderr
        self._exited = asyncio.get_running_loop().create_future()
        self._protocol.set_writer(self.process.stdin)
        self._tasks = [
            asyncio.create_task(
                run_async(
                    stop_event=self._stop_reading,
                    reader=self.process.stdout,
                    protocol=self._protocol,
                )
            ),
            asyncio.create_task(self._watch_exit(self.process)),
        ]
        self._stderr_task = asyncio.create_task(self._read_stderr(self.process.stderr))
        self._tasks.append(self._stderr_task)
        try:
            result = await self.request(
                "initialize", self._initialize_params(), self.timeouts.start
            )
        except (ServerFailure, asyncio.CancelledError):
            await self.stop()
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

    async def stop(self) -> None:
        """`shutdown`, `exit`, then the process group; each step under a time limit."""
        process = self.process
        if process is None:
            return
        step = self.timeouts.stop_step
        if self._initialized and process.returncode is None and not self.exited:
            # The polite way, for a server that got as far as answering `initialize`.
            with contextlib.suppress(ServerFailure):
                await self.request("shutdown", None, step)
            try:
                self.notify("exit", None)
            except Exception:  # a pipe already closed: the signals below end it anyway
                log.debug("%s: exit notification not sent", self.name, exc_info=True)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), self.timeouts.exit_wait)
        for signal_number in (signal.SIGTERM, signal.SIGKILL):
            if not group_alive(process.pid):
                break
            signal_group(process.pid, signal_number)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), step / 2)
            await wait_group_gone(process.pid, step / 2)
        self._stop_reading.set()
        if process.stdin is not None:
            process.stdin.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _watch_exit(self, process: asyncio.subprocess.Process) -> None:
        await process.wait()
        if self._exited is not None and not self._exited.done():
            self._exited.set_result(None)
        self._protocol.fail_pending(_ServerGone())
        self.state.signal_change()

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        """Drain stderr continuously: a server blocked on a full pipe answers nothing."""
        pending = b""
        while chunk := await stream.read(65536):
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                self.stderr_tail.append(line.decode("utf-8", "replace").rstrip())
            pending = pending[-4096:]

    async def _drain_stderr(self) -> None:
        """Let the last lines of a dead server's stderr arrive before they are quoted."""
        if self._stderr_task is not None:
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._stderr_task), 0.5)

    def exit_reason(self) -> str:
        """Why the server is gone, in words, with the last lines it wrote."""
        code = self.process.returncode if self.process is not None else None
        if code is None:
            reason = "the server is not running"
        elif code < 0:
            reason = f"the server was killed by signal {-code}"
        else:
            reason = f"the server exited with status {code}"
        return reason + self.stderr_excerpt()

    def stderr_excerpt(self) -> str:
        lines = [line for line in self.stderr_tail if line.strip()][-3:]
        return f" (stderr: {' | '.join(lines)})" if lines else ""

    # ---- messages --------------------------------------------------------------------------

    async def request(self, method: str, params: Any, timeout: float | None = None) -> Any:
        """Send a request and await its answer as plain JSON; raises ServerFailure.

        One future per request, resolved by the reader, failed by the exit watcher or the
        time limit's timer: a warm request costs no task, no wait set, no thread wake-up.
        """
        if not self.alive or self.exited:
            raise ServerFailure(self.exit_reason())
        message_id = f"mm-{next(self._ids)}"
        answer = self._protocol.send_request_on_loop(method, params, message_id)
        limit = self.timeouts.request if timeout is None else timeout
        grace = self.timeouts.indexing if timeout is None else 0.0  # not initialize, shutdown
        deadline = _Deadline(answer, limit, grace, lambda: self.state.loading)
        try:
            return await answer
        except AnswerError as error:
            raise ServerFailure(error.message, final=False) from None
        except _NoAnswerInTime:
            self._abandon(message_id)
            raise ServerFailure(f"no answer within {deadline.waited:g}s") from None
        except _ServerGone:
            await self._drain_stderr()
            raise ServerFailure(self.exit_reason()) from None
        except asyncio.CancelledError:
            self._abandon(message_id)
            raise
        finally:
            deadline.cancel()

    def _abandon(self, message_id: str) -> None:
        """Forget a request we stop waiting for, and tell the server so."""
        self._protocol.forget(message_id)
        if self.alive:
            try:
                self.notify("$/cancelRequest", {"id": message_id})
            except Exception:
                log.debug("%s: $/cancelRequest not sent", self.name, exc_info=True)

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (fire and forget)."""
        self._protocol.notify(method, params)

    def offers(self, provider: str, method: str) -> bool:
        """Whether the server announced a capability (`renameProvider`) or registered its
        method (`textDocument/rename`) since."""
        value = self.capabilities.get(provider)
        return (value is not None and value is not False) or self.state.registered(method)
