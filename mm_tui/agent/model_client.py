"""The model server, seen through the `openai` package: streaming, model listing, and every
fault turned into one clear line (SPEC §3).

`openai` is imported here, lazily: it costs 0.3 s, more than a whole first frame of the window.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mm_tui.agent.turn_signals import CancelFlag
from mm_tui.support.terminal_text import quoted
from mm_tui.support.url_text import shown_url

if TYPE_CHECKING:
    from mm_tui.agent.lean_transport import LeanTransport

log = logging.getLogger(__name__)

HOW_TO_SET_URL = "start it, or set another with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml"
NOT_OPENAI_COMPATIBLE = (
    "the server at {url} is not OpenAI-compatible: it has no /models (HTTP 404: {detail}) — "
    "the base URL usually ends in /v1"
)
RETRYABLE_STATUSES = (429, 500, 502, 503, 504)


@dataclass(frozen=True)
class ModelFault(Exception):
    """A server fault, phrased as the one line the person and the session's `errors` get."""

    message: str
    retryable: bool = False
    status: int | None = None
    body: str = ""

    def __str__(self) -> str:
        return self.message


class Interrupted(Exception):
    """The person interrupted while the model was streaming."""


def lean_transport_fits(base_url: str) -> bool:
    """Whether the lean transport may carry requests to `base_url`: plain http with no proxy
    in the environment. httpx stops reading the environment's proxies (and NO_PROXY) once it
    is given a transport, so a proxied or https server keeps httpx's own transport, with the
    proxies, certificates and NO_PROXY rules the `openai` client has always used."""
    import urllib.parse
    import urllib.request

    if urllib.parse.urlsplit(base_url).scheme != "http":
        return False
    proxies = urllib.request.getproxies_environment()  # http_proxy, ALL_PROXY… in any case
    return not (proxies.get("http") or proxies.get("all"))


class ModelClient:
    """One OpenAI-compatible endpoint. Thread-safe for one stream at a time."""

    def __init__(self, base_url: str, api_key: str, *, timeout: float = 300.0) -> None:
        self.base_url = base_url
        self.timeout = timeout
        self._api_key = api_key or "none"
        self._client: Any = None
        self._transport: LeanTransport | None = None
        #: How often a flowing event stream is read over plain http, in seconds (None: the
        #: lean transport's `PACE`); set before the client is built (the window reads less
        #: often than it draws).
        self.read_pace: float | None = None

    @property
    def client(self) -> Any:
        if self._client is None:
            import openai

            http_client = None
            if lean_transport_fits(self.base_url):
                from mm_tui.agent.lean_transport import LeanTransport

                pace = self.read_pace
                self._transport = LeanTransport() if pace is None else LeanTransport(pace)
                http_client = openai.DefaultHttpxClient(transport=self._transport)
            self._client = openai.OpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                timeout=self.timeout,
                max_retries=0,  # we retry 429/5xx ourselves, and say so
                http_client=http_client,
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
        request: dict[str, Any],
        cancel: threading.Event,
        on_chunks: Callable[[list[dict[str, Any]]], bool],
    ) -> None:
        """Stream one completion: `on_chunks` gets the chunks (plain dicts) of each block read,
        in order, as they arrive, and returns True to stop reading. Raises ModelFault,
        Interrupted, or what `on_chunks` raised.

        A helper thread does the HTTP exchange and calls `on_chunks`; this thread waits once,
        for the end or an interrupt, so an interrupt is noticed at once even while the server
        sends nothing (a stall, a slow first token), and no thread is woken per chunk beyond
        the one reading it (issue 16). A block's chunks (those one read of the socket
        completed) come in one call, so their work runs in one loop; `on_chunks` may look at
        `cancel` between them. Once this thread has left on an interrupt, `on_chunks` is never
        called again. The SSE body is read raw (`sse.EventStreamReader`), straight from the
        lean transport's socket when it carries the request: the same bytes the SDK's typed
        stream reads, at a small part of its cost per chunk.
        """
        finished = threading.Event()
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
            from mm_tui.agent.sse import EventStreamReader

            try:
                with self.client.chat.completions.with_streaming_response.create(
                    **request, stream=True
                ) as response:
                    run["response"] = response
                    http_response = response.http_response
                    events = EventStreamReader(http_response.encoding or "utf-8")
                    blocks = self._raw_blocks(http_response) or response.iter_bytes()
                    for block in blocks:
                        if take(events.feed(block)):
                            return
                        if events.failure is not None:
                            raise events.failure
                        if events.done:
                            return
                    if not take(events.end()) and events.failure is not None:
                        raise events.failure
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
            self._stop_reading(reader, run.get("response"))
            raise Interrupted()
        if "chunk_failure" in run:
            raise run["chunk_failure"]
        if "failure" in run:
            raise self.describe(run["failure"], model=request.get("model")) from None

    def _stop_reading(self, reader: threading.Thread, response: Any) -> None:
        """An interrupted stream: its connection shut, so the reader ends and the server
        stops generating (whether the first byte came or not)."""
        if not reader.is_alive():
            return
        if self._transport is not None and reader.ident is not None:
            self._transport.abort(reader.ident)
        if response is not None:
            try:
                response.close()
            except Exception:  # closing a broken stream must not hide why it broke
                log.debug("closing the model stream failed", exc_info=True)

    def _raw_blocks(self, response: Any) -> Iterator[bytes] | None:
        """The body's blocks as the lean transport reads them, when it carries `response`
        (None otherwise: httpx's own `iter_bytes` then reads it)."""
        return None if self._transport is None else self._transport.raw_blocks(response)

    def describe(self, exc: BaseException, *, model: str | None) -> ModelFault:
        """Turn any exception from the client into one line a person can act on."""
        import openai

        url = shown_url(self.base_url)
        if isinstance(exc, ModelFault):
            return exc
        if isinstance(exc, openai.APITimeoutError):
            return ModelFault(
                f"the model server at {url} did not answer within {self.timeout:g}s — "
                "it may still be loading the model; try again",
            )
        if isinstance(exc, openai.APIConnectionError):
            cause = _root_cause(exc)
            return ModelFault(
                f"cannot reach the model server at {url} ({cause}) — {HOW_TO_SET_URL}"
            )
        if isinstance(exc, openai.APIStatusError):
            status = exc.status_code
            detail = _error_detail(exc)
            body = _body_text(exc)
            if status == 401:
                return ModelFault(
                    f"the model server at {url} refused the API key (HTTP 401: {detail}) — set it "
                    "with OPENAI_API_KEY or apiKey in .mm.yaml",
                    status=status,
                    body=body,
                )
            if status == 404 and not model:  # GET /models itself is not there
                return ModelFault(
                    NOT_OPENAI_COMPATIBLE.format(url=url, detail=detail), status=status, body=body
                )
            if status == 404:
                return ModelFault(
                    f"the model server at {url} has no model '{quoted(model or '')}' "
                    f"(HTTP 404: {detail}) — "
                    "choose one with /model, --model, MM_MODEL or model in .mm.yaml",
                    status=status,
                    body=body,
                )
            if status == 429:
                return ModelFault(
                    f"the model server is rate limiting (HTTP 429: {detail})",
                    retryable=True,
                    status=status,
                    body=body,
                )
            if status >= 500:
                return ModelFault(
                    f"the model server failed (HTTP {status}: {detail})",
                    retryable=status in RETRYABLE_STATUSES,
                    status=status,
                    body=body,
                )
            return ModelFault(
                f"the model server rejected the request (HTTP {status}: {detail})",
                status=status,
                body=body,
            )
        if isinstance(exc, openai.APIError):
            return ModelFault(
                f"the model server reported an error mid-stream: {quoted(str(exc.message))}"
            )
        if isinstance(exc, json.JSONDecodeError | ValueError):
            return ModelFault(f"the model server sent a malformed chunk ({quoted(str(exc))})")
        name = type(exc).__name__
        if "Timeout" in name:
            return ModelFault(
                f"the model server at {url} stopped sending for {self.timeout:g}s mid-answer"
            )
        if "Protocol" in name or "Read" in name or "Connect" in name or isinstance(exc, OSError):
            return ModelFault(
                f"the connection to the model server at {url} broke mid-stream ({name})"
            )
        return ModelFault(
            f"unexpected failure talking to the model server ({name}: {quoted(str(exc))})"
        )


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


def mid_stream_fault(error: object) -> ModelFault:
    """The fault for a chunk carrying `error`: the server said it failed mid-stream."""
    message = error.get("message") if isinstance(error, dict) else str(error)
    return ModelFault(f"the model server reported an error mid-stream: {quoted(str(message))}")


def _root_cause(exc: BaseException) -> str:
    seen = exc
    while (earlier := seen.__cause__ or seen.__context__) is not None:
        seen = earlier
    text = str(seen) or type(seen).__name__
    if "refused" in text.lower():
        return "connection refused"
    return text.splitlines()[0][:160]


def _error_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message).splitlines()[0][:200]
    return str(getattr(exc, "message", "") or exc).splitlines()[0][:200]


def _body_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    try:
        return json.dumps(body) if body is not None else ""
    except (TypeError, ValueError):
        return str(body)
