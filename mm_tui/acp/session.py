"""One ACP session: a core Agent turning in a worker thread, its events sent to the client in
the order they happened, its permission questions asked through `session/request_permission`.

The sink runs in the worker thread; it only translates and queues. One pump task per session
sends the queue in order on the connection's event loop. A permission question is asked in its
own task (the worker waits for it, so nothing overtakes it), and a client that never answers
cannot block the session: a cancel ends the worker's wait (the core's gate) and the turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, InvalidStateError
from dataclasses import dataclass
from typing import Any, TypeVar

from acp import RequestError
from acp.interfaces import Client
from acp.meta import CLIENT_METHODS
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    FileEditToolCallContent,
    PermissionOption,
    SessionNotification,
    ToolCallProgress,
    ToolCallStart,
)
from acp.utils import serialize_params

from mm_tui.acp.updates import EventTranslator, Outgoing, PermissionAsk, SessionUpdate
from mm_tui.agent.events import (
    Event,
    PermissionAnswer,
    PermissionReply,
    PermissionRequest,
    TurnEnded,
)
from mm_tui.agent.port import AgentPort

log = logging.getLogger(__name__)
T = TypeVar("T")

#: What "allow always" allows, as the window's `s` says it (`exactly this command`).
ALLOW_FOR_SESSION = "Allow {grant} for the session"


def permission_options(grant: str) -> list[PermissionOption]:
    """The three answers of the window's keys a, s, r; the second names what it allows."""
    return [
        PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
        PermissionOption(
            option_id="allow_always",
            name=ALLOW_FOR_SESSION.format(grant=grant or "this tool"),
            kind="allow_always",
        ),
        PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    ]


ANSWERS = {
    "allow_once": PermissionAnswer.ALLOW_ONCE,
    "allow_always": PermissionAnswer.ALLOW_SESSION,
    "reject_once": PermissionAnswer.REJECT,
}


@dataclass(frozen=True)
class _Flush:
    """Set once everything queued before it was sent."""

    done: asyncio.Future[None]


class SessionBridge:
    """The event sink of one session, and the pump that sends what it queued."""

    def __init__(self, client: Client, translator: EventTranslator) -> None:
        self.client = client
        self.translator = translator
        self.session_id = ""
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[Outgoing | _Flush] = asyncio.Queue()
        self._asks: set[asyncio.Task[None]] = set()
        self._pump = self._loop.create_task(self._send_in_order())
        #: What the client's "cancelled" answer to a question does: end the turn (set by
        #: the session), so the call ends interrupted, not rejected.
        self.cancel_turn: Callable[[], None] = lambda: None

    def sink(self, event: Event) -> None:
        """The core's sink (any thread): translate now, send in order on the loop."""
        try:
            items = self.translator.translate(event)
        except Exception:
            log.exception("cannot say %s over ACP", type(event).__name__)
            if isinstance(event, PermissionRequest):
                _answer(event.future, PermissionAnswer.REJECT)  # never leave the core waiting
            return
        for item in items:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def send(self, item: SessionUpdate) -> None:
        """Queue an update made outside the translator (a terminal embedded in its call)."""
        self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def call(self, request: Callable[[], Awaitable[T]], timeout: float) -> T:
        """`await request()` on the connection's loop, from a worker thread (never the loop's
        own); its result within `timeout` seconds, else TimeoutError (the request dropped)."""

        async def run() -> T:
            return await request()

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()
            raise

    async def flush(self) -> None:
        """Return once everything queued so far has been sent. The mark is queued the way
        `sink` queues (a callback on the loop), so it lands behind every item sunk before it,
        also those sunk on the loop itself (a replay): the load is answered after its replay."""
        done: asyncio.Future[None] = self._loop.create_future()
        self._loop.call_soon_threadsafe(self._queue.put_nowait, _Flush(done))
        await done

    async def close(self) -> None:
        self._pump.cancel()
        for task in list(self._asks):
            task.cancel()

    async def _send_in_order(self) -> None:
        while True:
            item = await self._queue.get()
            if isinstance(item, _Flush):
                item.done.set_result(None)
            elif isinstance(item, PermissionAsk):
                task = self._loop.create_task(self._ask(item))
                self._asks.add(task)
                task.add_done_callback(self._asks.discard)
            else:
                try:
                    await self._update(item)
                except Exception:
                    log.debug("session/update not delivered", exc_info=True)

    async def _update(self, item: SessionUpdate) -> None:
        """One session/update. A new file's diff says `"oldText": null`: the SDK drops every
        None, and a client (Toad) then draws no diff at all."""
        if not _new_file_diffs(item):
            await self.client.session_update(session_id=self.session_id, update=item)
            return
        params = serialize_params(SessionNotification(session_id=self.session_id, update=item))
        for content in params["update"].get("content") or []:
            if content.get("type") == "diff" and "oldText" not in content:
                content["oldText"] = None
        connection: Any = getattr(self.client, "_conn")  # noqa: B009 - the SDK's JSON-RPC link
        await connection.send_notification(CLIENT_METHODS["session_update"], params)

    async def _ask(self, ask: PermissionAsk) -> None:
        answer = PermissionAnswer.REJECT
        try:
            response = await self.client.request_permission(
                session_id=self.session_id,
                tool_call=ask.tool_call,
                options=permission_options(ask.grant),
            )
            outcome = response.outcome
            if isinstance(outcome, AllowedOutcome):
                answer = ANSWERS.get(outcome.option_id, PermissionAnswer.REJECT)
            elif isinstance(outcome, DeniedOutcome):  # the turn was cancelled, not the call
                self.cancel_turn()
                return
        except Exception:  # a client that cannot ask: nothing runs without a yes
            log.debug("session/request_permission failed; rejecting", exc_info=True)
        _answer(ask.future, answer)


def _new_file_diffs(item: SessionUpdate) -> bool:
    if not isinstance(item, ToolCallStart | ToolCallProgress):
        return False
    return any(
        isinstance(c, FileEditToolCallContent) and c.old_text is None for c in item.content or []
    )


def _answer(future: Future[PermissionAnswer | PermissionReply], answer: PermissionAnswer) -> None:
    try:
        if not future.done():
            future.set_result(answer)
    except InvalidStateError:  # the core stopped waiting (the turn was cancelled) meanwhile
        log.debug("permission answered after the turn stopped waiting", exc_info=True)


class AcpSession:
    """A session as the protocol sees it: prompts one at a time, cancel, close.

    Its id is the core's session id (the session file's), or the id the client loaded: a
    session another process still writes is continued in a fork, under its own new id, while
    the client goes on naming it as it asked.
    """

    def __init__(self, agent: AgentPort, bridge: SessionBridge, session_id: str = "") -> None:
        self.agent = agent
        self.bridge = bridge
        self.session_id = session_id or agent.session_id()
        bridge.session_id = self.session_id
        bridge.cancel_turn = agent.cancel
        self._running = False
        self._notices_said = False

    async def prompt(self, text: str) -> TurnEnded:
        if self._running:
            raise RequestError.invalid_request({"details": "a turn is already running"})
        self._running = True
        try:
            if not self._notices_said:  # said once, before the first turn
                self._notices_said = True
                for notice in self.agent.startup_notices:
                    self.bridge.sink(notice)
            ended = await asyncio.to_thread(self.agent.run_turn, text)
            await self.bridge.flush()
            return ended
        finally:
            self._running = False

    def cancel(self) -> None:
        self.agent.cancel()

    async def close(self) -> None:
        self.agent.cancel()
        await asyncio.to_thread(self.agent.close)
        await self.bridge.close()
