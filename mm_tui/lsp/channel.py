"""The conversation with one server over its stdin and stdout, with one reader at a time.

Why no asyncio and no reader thread in the way: a warm request to a server that answers in
0.3 ms must cost the client little more than a bare blocking request (bench/bench_lsp.py: within
1.2x). A hand-off between threads or loop turns costs more than that. So the thread that
asks writes its request and reads the answer itself, under the channel's lock, and hands
everything else it reads on the way (diagnostics, progress, the server's own requests) to the
same handlers, in order. Between calls a plain idle thread reads instead, so the server's
requests are answered promptly while the model thinks (SPEC §6). The idle thread waits on an
epoll set from which the asking thread takes the server's stdout while it reads, so the
answer it waits for never wakes the idle thread.

Rules that keep messages neither lost nor reordered: only the lock holder reads or writes;
whoever reads dispatches what it read before letting the lock go (the buffer never keeps a
whole message across a release); a write that finds the server's stdin full reads its stdout
meanwhile, so neither side blocks on the other.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import select
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from mm_tui.lsp.call_watch import CallWatch
from mm_tui.lsp.framing import FrameReader, frame

log = logging.getLogger(__name__)

_POLL_SECONDS = 0.05  # how often a waiting reader looks at the call's cancel flag and limit
_IDLE_WRITE_SECONDS = 5.0  # how long the idle reader tries to deliver its answers
_CANCEL_WRITE_SECONDS = 1.0  # how long a `$/cancelRequest` may take to write
_CHUNK = 1 << 16
_METHOD_NOT_FOUND = -32601
_INTERNAL_ERROR = -32603

Handler = Callable[[Any], Any]


class AnswerError(Exception):
    """The server answered a request with an error."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.message, self.code = message, code


class NoAnswerInTime(Exception):
    """A request's time limit passed; `waited` is how long it was given."""

    def __init__(self, waited: float) -> None:
        super().__init__(f"no answer within {waited:g}s")
        self.waited = waited


class ServerGone(Exception):
    """The server's stdout closed, its stdin broke, or the process ended."""


class Channel:
    """Requests, notifications and the server's own messages over a pair of pipes."""

    def __init__(
        self,
        stdin: int,
        stdout: int,
        handlers: Mapping[str, Handler],
        watch: CallWatch,
        process_ended: Callable[[], bool],
        name: str,
        pid: int | None = None,
    ) -> None:
        """`process_ended()` says whether the server's process is gone; with its `pid`, the
        idle reader also wakes when it ends (a pidfd), so a server whose stdout lives on in a
        child of its own is still known dead before the next call (SPEC §4: restarted)."""
        self._stdin, self._stdout = stdin, stdout
        os.set_blocking(stdin, False)
        os.set_blocking(stdout, False)
        self._handlers = handlers
        self._watch = watch
        self._process_ended = process_ended
        self._name = name
        self._lock = threading.Lock()
        self._reader = FrameReader()
        self._ids = itertools.count(1)
        self._poll = select.poll()
        self._poll.register(stdout, select.POLLIN)
        self._idle_set = select.epoll()
        self._idle_set.register(stdout, select.EPOLLIN)
        self._wake_read, self._wake_write = os.pipe()
        self._idle_set.register(self._wake_read, select.EPOLLIN)
        self._pidfd = _pidfd(pid)
        if self._pidfd is not None:
            self._idle_set.register(self._pidfd, select.EPOLLIN)
        #: Whether the server can no longer be heard (its stdout ended).
        self.closed = False
        self._stopping = False
        self._idle = threading.Thread(target=self._read_while_idle, name=f"lsp-{name}", daemon=True)
        self._idle.start()

    # ---- the asking thread -----------------------------------------------------------------

    def request(
        self,
        method: str,
        params: Any,
        limit: float,
        grace: float = 0.0,
        loading: Callable[[], bool] = lambda: False,
    ) -> Any:
        """Send a request and read until its answer; the plain JSON result.

        Raises AnswerError, NoAnswerInTime (after `limit`, stretched once by `grace` when it
        falls while `loading()`: a server may hold its first request behind a project's load),
        ServerGone, or what the call's watch raises (cancelled, the call's own limit).
        """
        message_id = f"mm-{next(self._ids)}"
        data = frame({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params})
        check = self._watch.check
        # Inline, not `_reading()` nor `_write()` at first: the warm path counts microseconds.
        if not self._lock.acquire(blocking=False):
            self._acquire(check)
        try:
            self._idle_set.modify(self._stdout, 0)  # `_idle_reads(False)`
        except (OSError, ValueError):
            self._idle_reads(False)  # closed, or stopped meanwhile: it knows
        try:
            try:
                sent = os.write(self._stdin, data)  # a request fits in the pipe, usually
            except OSError:  # full, or broken: `_write` waits, or says the server is gone
                sent = 0
            if sent < len(data):
                self._write(data, check, sent)
            waited = limit
            deadline = time.monotonic() + limit
            while True:
                message = self._next(deadline)
                if message is None:
                    if grace > 0 and loading():
                        deadline, waited, grace = deadline + grace, waited + grace, 0.0
                        continue
                    raise NoAnswerInTime(waited)
                if message.get("id") == message_id and "method" not in message:
                    error = message.get("error")
                    if error is not None:
                        raise _answer_error(error)
                    return message.get("result")
                self._dispatch(message, check)
        except BaseException as ended:  # a time limit, a cancel: the server is told
            if not isinstance(ended, AnswerError | ServerGone):
                self._cancel_request(message_id)
            raise
        finally:
            try:  # what came after the answer, in order (`_dispatch_buffered`)
                while self._reader.buffer and (message := self._reader.next_message()) is not None:
                    self._dispatch(message, check)
            finally:
                self._idle_reads(True)
                self._lock.release()

    def notify(self, method: str, params: Any) -> None:
        """Send a notification; raises ServerGone when the server's stdin is closed."""
        data = frame({"jsonrpc": "2.0", "method": method, "params": params})
        check = self._watch.check
        with self._holding(check):
            self._write(data, check)
            self._dispatch_buffered(check)

    def pump(self, timeout: float) -> None:
        """Read and handle the server's messages for up to `timeout` seconds, returning after
        the first ones (what a wait for news needs); returns at once when the server is gone."""
        with self._reading():
            message = None
            with contextlib.suppress(ServerGone):
                message = self._next(time.monotonic() + timeout)
            if message is not None:
                self._dispatch(message, self._watch.check)
            self._dispatch_buffered(self._watch.check)

    def stop(self) -> None:
        """End the idle reader (the process's pipes are closed by its owner)."""
        self._stopping = True
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"x")
        if self._idle is not threading.current_thread():
            self._idle.join(1.0)
        if not self._idle.is_alive():
            self._idle_set.close()
            for fd in (self._wake_read, self._wake_write, self._pidfd):
                if fd is not None:
                    os.close(fd)

    # ---- reading ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def _holding(self, check: Callable[[], None]) -> Iterator[None]:
        """The lock, waited for in slices so that a cancel or a call's limit still counts."""
        self._acquire(check)
        try:
            yield
        finally:
            self._lock.release()

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """The lock, with stdout taken from the idle reader's set while this thread reads."""
        self._acquire(self._watch.check)
        self._idle_reads(False)
        try:
            yield
        finally:
            self._idle_reads(True)
            self._lock.release()

    def _acquire(self, check: Callable[[], None]) -> None:
        if not self._lock.acquire(blocking=False):
            while not self._lock.acquire(timeout=_POLL_SECONDS):
                check()

    def _idle_reads(self, on: bool) -> None:
        """Give the idle reader the server's stdout back (`on`), or take it away."""
        if self.closed:
            return
        try:
            self._idle_set.modify(self._stdout, select.EPOLLIN if on else 0)
        except (OSError, ValueError):  # the channel stopped meanwhile
            log.debug("%s: the idle set was closed", self._name)

    def _next(self, deadline: float) -> dict[str, Any] | None:
        """The next message (from the buffer, else the pipe), or None at `deadline`."""
        while True:
            message = self._reader.next_message() if self._reader.buffer else None
            if message is not None:
                return message
            if self.closed:
                raise ServerGone
            now = time.monotonic()
            self._watch.check()
            if now >= deadline:
                return None
            if not self._poll.poll(min(deadline - now, _POLL_SECONDS) * 1000):
                if self._process_ended() and not self._poll.poll(0):
                    self.closed = True  # its stdout may live on in a child: do not wait for it
                continue
            self._read_available()

    def _read_available(self) -> None:
        """Read what the pipe holds now, without blocking; EOF marks the server gone."""
        try:
            data = os.read(self._stdout, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._reader.feed(data)
        else:
            self.closed = True

    def _write(self, data: bytes, check: Callable[[], None], sent: int = 0) -> None:
        """Write all of `data` (but its first `sent` bytes, already written); while the
        server's stdin is full, its stdout is read (not handled yet) so that a server blocked
        on writing to us can read again."""
        view = memoryview(data)[sent:]
        while view:
            try:
                view = view[os.write(self._stdin, view) :]
                continue
            except BlockingIOError:
                pass
            except OSError as error:
                if error.errno in (errno.EPIPE, errno.EBADF):
                    raise ServerGone from None
                raise
            try:
                check()
            except BaseException:
                if len(view) < len(data):  # half a frame went: the stream cannot go on
                    self.closed = True
                raise
            if self.closed and self._process_ended():
                raise ServerGone
            waiting = select.poll()
            waiting.register(self._stdin, select.POLLOUT)
            if not self.closed:
                waiting.register(self._stdout, select.POLLIN)
            for fd, _ in waiting.poll(_POLL_SECONDS * 1000):
                if fd == self._stdout:
                    self._read_available()

    # ---- handling --------------------------------------------------------------------------

    def _dispatch_buffered(self, check: Callable[[], None]) -> None:
        """Handle every whole message left in the buffer (before the lock is let go)."""
        while (message := self._reader.next_message()) is not None:
            self._dispatch(message, check)

    def _dispatch(self, message: dict[str, Any], check: Callable[[], None]) -> None:
        """Hand a message to its handler; a server's request gets the handler's answer
        (written under `check`, the bound of whoever reads)."""
        method = message.get("method")
        if not isinstance(method, str):
            log.debug("%s: an answer nobody waits for was dropped: %r", self._name, message)
            return
        handler = self._handlers.get(method)
        params = message.get("params")
        if "id" not in message:
            if handler is not None:
                try:
                    handler(params)
                except Exception:
                    log.exception("%s: handling %s failed", self._name, method)
            return
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if handler is None:
            reply["error"] = {"code": _METHOD_NOT_FOUND, "message": f"{method} not supported"}
        else:
            try:
                reply["result"] = handler(params)
            except Exception as error:
                log.exception("%s: answering %s failed", self._name, method)
                reply["error"] = {"code": _INTERNAL_ERROR, "message": str(error)}
        try:
            self._write(frame(reply), check)
        except ServerGone:
            log.debug("%s: the answer to %s was not delivered", self._name, method)

    def _cancel_request(self, message_id: str) -> None:
        """Tell the server we stopped waiting; its late answer will be dropped."""
        if self.closed:
            return
        data = frame({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": message_id}})
        try:
            self._write(data, _bound(_CANCEL_WRITE_SECONDS))
        except Exception:
            log.debug("%s: $/cancelRequest not sent", self._name, exc_info=True)

    # ---- the idle reader -------------------------------------------------------------------

    def _read_while_idle(self) -> None:
        """Between calls: wait for the server to say something, then handle it."""
        while not self._stopping:
            try:
                self._idle_set.poll()
            except OSError:
                return
            if self._stopping:
                return
            with self._lock:
                if self.closed or self._stopping:
                    return
                self._read_available()
                try:
                    self._dispatch_buffered(_bound(_IDLE_WRITE_SECONDS))
                except Exception:
                    log.exception("%s: the idle reader failed", self._name)
                if not self.closed and self._process_ended() and not self._poll.poll(0):
                    self.closed = True  # ended, its last words read: nothing more will come
                if self.closed:
                    return


def _pidfd(pid: int | None) -> int | None:
    """A descriptor that becomes readable when process `pid` ends (Linux 5.3+), if any."""
    opener = getattr(os, "pidfd_open", None)
    if pid is None or opener is None:
        return None
    try:
        return opener(pid)
    except OSError:
        return None


def _bound(seconds: float) -> Callable[[], None]:
    """A check for a write outside any call: a server that reads nothing for `seconds` is
    taken for gone, so no reader ever holds the channel for good."""
    deadline = time.monotonic() + seconds

    def check() -> None:
        if time.monotonic() > deadline:
            raise ServerGone

    return check


def _answer_error(error: Any) -> AnswerError:
    if not isinstance(error, dict):
        return AnswerError(str(error), _INTERNAL_ERROR)
    code = error.get("code")
    message = str(error.get("message") or "unknown error")
    return AnswerError(message, code if isinstance(code, int) else _INTERNAL_ERROR)
