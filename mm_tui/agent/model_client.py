"""The model server, seen through the `openai` package: streaming, model listing, and every
fault turned into one clear line (SPEC §3).

`openai` is imported here, lazily: it costs 0.3 s, more than a whole first frame of the window.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from mm_tui.agent.messages import ChatRequest
from mm_tui.agent.model_faults import (
    EMPTY_BODY,
    NO_EVENT_AT_ALL,
    NO_EVENT_FOR,
    NO_EVENT_IN,
    ModelFault,
    describe,
    mid_stream_fault,
    not_an_event_stream,
)
from mm_tui.agent.model_wire import Connections, InFlight
from mm_tui.agent.turn_signals import CancelFlag
from mm_tui.support.url_text import shown_url

if TYPE_CHECKING:
    import httpx2
    from openai import OpenAI

log = logging.getLogger(__name__)

__all__ = ["Interrupted", "ModelClient", "ModelFault", "mid_stream_fault", "sse_chunks"]

#: A stream is read at most this far (bytes) without a complete event: no event of a real
#: answer comes near it, and no more is held (a line that never ends, comments only).
QUIET_BYTES = 4 * 1024 * 1024


class Interrupted(Exception):
    """The person interrupted while the model was streaming."""


class ModelClient:
    """One OpenAI-compatible endpoint. Thread-safe for one stream at a time."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 300.0) -> None:
        self.base_url = base_url
        #: The base URL as every line may show it: no password of its userinfo.
        self.shown_url = shown_url(base_url)
        self.timeout = timeout
        #: A stream that sends no event this long (only keep-alive comments: the read timeout
        #: sees bytes) ends with `NO_EVENT_FOR`; twice the read timeout, since a server that
        #: sends them says it is busy (`mlx_lm.server` sends them while it reads the prompt).
        self.no_event_limit = 2 * timeout
        self._api_key = api_key or "none"
        self._client: OpenAI | None = None
        self._connections = Connections()

    @property
    def client(self) -> OpenAI:
        if self._client is None:
            import openai

            from mm_tui.agent.model_wire import build_http_client

            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self.timeout,
                max_retries=0,  # we retry 429/5xx ourselves, and say so
                http_client=build_http_client(self._connections),
            )
            # Here, where the window builds the client, not in the first message's stream:
            # the SDK imports its chat resources on first use (tens of ms of CPU), its first
            # request's headers name the platform (`platform.platform()` runs `uname -p` in a
            # subprocess), and the stream's reader loads msgspec (~12 ms).
            _ = self._client.chat.completions
            self._client.platform_headers()
            import mm_tui.agent.sse  # noqa: F401
        return self._client

    def list_models(self) -> list[str]:
        try:
            return [m.id for m in self.client.models.list()]
        except Exception as exc:  # every failure becomes one line
            log.debug("listing the models failed", exc_info=True)
            raise self.describe(exc, model=None) from None

    def stream(
        self,
        request: ChatRequest,
        cancel: threading.Event,
        on_chunks: Callable[[list[dict[str, Any]]], bool],
    ) -> None:
        """Stream one completion: `on_chunks` gets the chunks (plain dicts) of each block read,
        in order, as they arrive, and returns True to stop reading. Raises ModelFault,
        Interrupted, or what `on_chunks` raised.

        A helper thread does the HTTP exchange and calls `on_chunks`; this thread waits once,
        for the end or an interrupt, so an interrupt is noticed at once even while the server
        sends nothing (a stall, a slow first token), and no thread is woken per chunk beyond
        the one reading it. A block's chunks (those one read of the socket completed) come in
        one call, so their work runs in one loop; `on_chunks` may look at `cancel` between
        them. Once this thread has left on an interrupt, `on_chunks` is never called again.
        The SSE body is read raw (`sse.EventStreamReader`): the same bytes the SDK's typed
        stream reads, at a small part of its cost per chunk.
        """
        finished = threading.Event()
        connection = InFlight()
        gate = threading.Lock()  # held around a block's on_chunks call; the interrupt takes it
        run: dict[str, Any] = {}

        def take(chunks: list[dict[str, Any]]) -> bool:
            """One block's chunks to `on_chunks`, up to one carrying `error` (the server's
            fault, raised after the chunks before it); True when reading must stop."""
            if not chunks:
                return False
            with gate:
                if run.get("left") or cancel.is_set():
                    return True
                fault = None
                for at, chunk in enumerate(chunks):
                    if chunk.get("error"):
                        fault, chunks = mid_stream_fault(chunk["error"]), chunks[:at]
                        break
                try:
                    if chunks and on_chunks(chunks):
                        return True
                except BaseException as exc:  # raised as it is in the caller
                    log.debug("handling a chunk failed", exc_info=True)
                    run["chunk_failure"] = exc
                    return True
                if fault is not None:
                    raise fault
            return False

        def read() -> None:
            from mm_tui.agent.model_wire import chat_request

            try:
                with self._connections.carrying(connection):
                    response = chat_request(self.client, request)
                try:
                    self._read_body(response.http_response, take)
                finally:
                    response.close()
            except BaseException as exc:  # handed to the caller, which describes it
                log.debug("the model stream ended with an exception", exc_info=True)
                run["failure"] = exc
            finally:
                finished.set()

        reader = threading.Thread(target=read, name="mm-model-stream", daemon=True)
        if isinstance(cancel, CancelFlag):
            with cancel.also_sets(finished):
                reader.start()
                finished.wait()
        else:  # a bare Event cannot wake this thread: look at it now and then
            reader.start()
            while not finished.wait(0.05) and not cancel.is_set():
                pass
        if cancel.is_set():
            with gate:
                run["left"] = True
            connection.shut()  # the reader ends (and closes it); the server stops generating
            raise Interrupted()
        if "chunk_failure" in run:
            raise run["chunk_failure"]
        if "failure" in run:
            raise self.describe(run["failure"], model=request.get("model")) from None

    def _read_body(
        self, response: httpx2.Response, take: Callable[[list[dict[str, Any]]], bool]
    ) -> None:
        """The event stream of `response` to `take`, block by block, up to `[DONE]`, its end,
        or a bound: `QUIET_BYTES` of body, or `no_event_limit` seconds, without an event."""
        from mm_tui.agent.model_wire import body_blocks
        from mm_tui.agent.sse import EventStreamReader

        events = EventStreamReader(response.encoding or "utf-8")
        clock = time.monotonic
        seen, quiet_bytes, quiet_since, total = 0, 0, clock(), 0
        for block in body_blocks(response):
            total += len(block)
            if take(events.feed(block)):
                return
            if events.failure is not None:
                raise self._failure(events.failure, response)
            if events.done:
                return
            if events.events != seen:
                seen, quiet_bytes, quiet_since = events.events, 0, clock()
                continue
            quiet_bytes += len(block)
            if quiet_bytes > QUIET_BYTES:
                raise ModelFault(NO_EVENT_IN.format(url=self.shown_url, size=QUIET_BYTES >> 20))
            if clock() - quiet_since > self.no_event_limit:
                raise ModelFault(
                    NO_EVENT_FOR.format(url=self.shown_url, seconds=self.no_event_limit)
                )
        if take(events.end()):
            return
        if events.failure is not None:
            raise self._failure(events.failure, response)
        if not events.events:
            status = response.status_code
            what = EMPTY_BODY if not total else NO_EVENT_AT_ALL
            raise ModelFault(what.format(url=self.shown_url, status=status, size=total))

    def _failure(self, failure: Exception, response: httpx2.Response) -> Exception:
        from mm_tui.agent.sse import NotAnEventStream

        if isinstance(failure, NotAnEventStream):
            content_type = response.headers.get("content-type", "")
            return not_an_event_stream(self.shown_url, content_type, failure.first_line)
        return failure

    def describe(self, exc: BaseException, *, model: str | None) -> ModelFault:
        """Turn any exception from the client into one line a person can act on."""
        return describe(exc, url=self.shown_url, timeout=self.timeout, model=model)


def sse_chunks(blocks: Iterable[bytes], encoding: str = "utf-8") -> Iterator[dict[str, Any]]:
    """The JSON chunks of a server-sent-events body, read as its bytes arrive, up to `[DONE]`
    (`sse.EventStreamReader` says how). A chunk carrying `error` is a fault reported by the
    server mid-stream; an event that does not decode raises its error after the chunks before
    it."""
    from mm_tui.agent.sse import EventStreamReader

    events = EventStreamReader(encoding)

    def read() -> Iterator[dict[str, Any]]:
        for block in blocks:
            yield from events.feed(block)
            if events.failure is not None:
                raise events.failure
            if events.done:
                return
        yield from events.end()
        if events.failure is not None:
            raise events.failure

    for chunk in read():
        if chunk.get("error"):
            raise mid_stream_fault(chunk["error"])
        yield chunk
