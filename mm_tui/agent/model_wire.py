"""The HTTP side of a model call, on the `openai` client and its own httpx transport: the
request sent as the SDK sends it (without its walk of the whole history), the body read with
its size bounded, and the connection an interrupt shuts from another thread.

httpx does the HTTP: framing (Content-Length, chunked, or a body that ends when the connection
closes, as `http.server`-based servers such as `mlx_lm.server` answer), proxies, TLS. What is
here is about a model's answer, not about HTTP:

- `chat_request` posts the body `chat.completions.create` would post, through the SDK's own
  `post`: the same URL, headers, errors (`APIStatusError`…) and JSON bytes, but not
  `maybe_transform`, which walks every value of the history on every request, an O(n²)
  session (`bench/bench_transport.py`: through `create`, 59 ms of client CPU a request at 400
  messages against 8 ms at 40; through `chat_request`, 2.5 ms against 2.1 ms);
- `body_blocks` reads the body as it arrives; a compressed one (asked for uncompressed) is
  inflated at most `INFLATE_STEP` bytes at a time, so a compression bomb never sits in memory;
- `Connections` learns the socket of a request as it opens, so an interrupt shuts it down
  from the waiting thread (`InFlight.shut`): the server sees the connection close and stops
  generating, even before its first byte (closing a socket another thread reads does not
  wake that read; shutting it down does).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import socket
import threading
import zlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from mm_tui.agent.messages import ChatRequest

if TYPE_CHECKING:
    import httpx2
    from openai import APIResponse, OpenAI, Stream
    from openai.types.chat import ChatCompletionChunk

log = logging.getLogger(__name__)

#: A compressed body is inflated at most this many bytes at a time.
INFLATE_STEP = 64 * 1024
#: An error answer (a status of 300 or more) is read at most this far: the SDK reads it whole.
ERROR_BODY_MOST = 64 * 1024
#: The keys of a chat request in the order the SDK's `chat.completions.create` writes them
#: (its body is a dict literal in this order), so the bytes sent are the bytes it would send.
SDK_KEY_ORDER = (
    "model", "stream", "service_tier", "messages", "audio", "frequency_penalty",
    "function_call", "functions", "logit_bias", "logprobs", "max_completion_tokens",
    "max_tokens", "metadata", "modalities", "moderation", "n", "parallel_tool_calls",
    "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_options",
    "prompt_cache_retention", "reasoning_effort", "response_format", "safety_identifier",
    "seed", "stop", "store", "stream_options", "temperature", "tool_choice", "tools",
    "top_logprobs", "top_p", "user", "verbosity", "web_search_options",
)  # fmt: skip


class BodyFault(Exception):
    """The body cannot be read as it came (an encoding not asked for, a corrupt one)."""


def build_http_client(connections: Connections) -> httpx2.Client:
    """The httpx client under the `openai` client: the SDK's defaults (`DefaultHttpxClient`:
    its timeouts, connection limits, proxies from the environment), with

    - no redirect followed: a model API that redirects has a base URL to fix, and httpx would
      turn a redirected POST (301, 302) into a GET without its body; `ModelClient.describe`
      names the new address instead;
    - `Accept-Encoding: identity`: an event stream is read as it comes, and a compressed one
      could inflate to gigabytes;
    - a connection per request, whose socket `connections` learns as it opens (a pooled one
      would be reused without a word), for an interrupt to shut;
    - an error answer read at most `ERROR_BODY_MOST` bytes (`cap_error_body`).
    """
    import httpx2
    import openai

    return openai.DefaultHttpxClient(
        follow_redirects=False,
        headers={"Accept-Encoding": "identity"},
        limits=httpx2.Limits(max_connections=100, max_keepalive_connections=0),
        event_hooks={"request": [connections.trace], "response": [cap_error_body]},
    )


def cap_error_body(response: httpx2.Response) -> None:
    """An httpx `response` event hook: the body of an error answer, which the SDK reads whole
    to describe it, ends after `ERROR_BODY_MOST` bytes (an endless one would fill memory)."""
    if response.status_code >= 300:
        response.stream = _capped_stream_class()(response.stream, ERROR_BODY_MOST)


@functools.cache
def _capped_stream_class() -> type:
    """httpx's byte stream ended after `most` bytes (made once httpx is loaded)."""
    import httpx2

    class Capped(httpx2.SyncByteStream):
        def __init__(self, stream: httpx2.SyncByteStream, most: int) -> None:
            self._stream = stream
            self._most = most

        def __iter__(self) -> Iterator[bytes]:
            left = self._most
            for data in self._stream:
                yield data[:left]
                left -= len(data)
                if left <= 0:
                    return

        def close(self) -> None:
            self._stream.close()

    return Capped


def chat_request(client: OpenAI, request: ChatRequest) -> APIResponse[Stream[ChatCompletionChunk]]:
    """POST `request` as a streamed chat completion; the SDK's `APIResponse`, its body unread
    (the caller closes it). Raises what `chat.completions.create` raises."""
    import openai
    from openai._base_client import make_request_options
    from openai._constants import RAW_RESPONSE_HEADER
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

    sent = {"stream": True, **request}
    body = {key: sent[key] for key in SDK_KEY_ORDER if key in sent}
    body.update(sent)  # a key the SDK does not know goes last, as `extra_body` puts it
    options = make_request_options(
        extra_headers={RAW_RESPONSE_HEADER: "stream"},  # as `with_streaming_response` sets
        security={"bearer_auth": True},
    )
    # the raw-response header makes the SDK answer its `APIResponse`, the body unread
    return client.post(  # pyright: ignore[reportReturnType]
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        options=options,
        stream=True,
        stream_cls=openai.Stream[ChatCompletionChunk],
    )


def body_blocks(response: httpx2.Response) -> Iterator[bytes]:
    """The body of an httpx response as it arrives, decoded if it came compressed."""
    coding = response.headers.get("content-encoding", "").strip().lower()
    raw = response.iter_raw()
    if coding in ("", "identity"):
        return raw
    if coding in ("gzip", "x-gzip", "deflate"):
        return _inflated(raw, coding)
    raise BodyFault(f"compressed its answer ({coding[:40]}) though asked not to")


def _inflated(raw: Iterator[bytes], coding: str) -> Iterator[bytes]:
    """gzip or deflate (zlib-wrapped, or raw as some servers send it), `INFLATE_STEP` bytes of
    output at most per step, whatever the ratio."""
    wbits = zlib.MAX_WBITS | 16 if coding != "deflate" else zlib.MAX_WBITS
    inflater = zlib.decompressobj(wbits)
    started = False
    for data in raw:
        while True:
            try:
                out = inflater.decompress(data, INFLATE_STEP)
            except zlib.error as exc:
                if coding == "deflate" and not started:  # raw deflate, without its header
                    inflater, started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                log.debug("a compressed answer does not inflate", exc_info=True)
                raise BodyFault(f"sent a corrupt {coding} answer ({exc})") from None
            started = True
            data = inflater.unconsumed_tail
            if out:
                yield out
            if inflater.eof:
                return
            if not data and len(out) < INFLATE_STEP:  # else more may wait inside the inflater
                break


class InFlight:
    """One request's connection, as an interrupt from another thread sees it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._shut = False

    def opened(self, sock: socket.socket) -> None:
        with self._lock:
            self._socket = sock
            if self._shut:
                _shut(sock)

    def shut(self) -> None:
        """End the request wherever it waits, or as soon as its connection opens."""
        with self._lock:
            self._shut = True
            sock = self._socket
        if sock is not None:
            _shut(sock)


class Connections:
    """The connection of each request made inside `carrying`, learnt from httpcore's `trace`
    as it opens, for `InFlight.shut` from another thread."""

    def __init__(self) -> None:
        self._local = threading.local()

    def trace(self, request: httpx2.Request) -> None:
        """An httpx `request` event hook: a request made inside `carrying` reports its
        connection to `_seen`."""
        if getattr(self._local, "request", None) is not None:
            request.extensions["trace"] = self._seen

    @contextlib.contextmanager
    def carrying(self, request: InFlight) -> Iterator[None]:
        """The calling thread's requests, until the block ends, are `request`'s."""
        self._local.request = request
        try:
            yield
        finally:
            self._local.request = None

    def _seen(self, event: str, info: dict[str, Any]) -> None:
        if not event.endswith(("connect_tcp.complete", "connect_unix_socket.complete")):
            return
        request: InFlight | None = getattr(self._local, "request", None)
        stream = info.get("return_value")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if request is not None and isinstance(sock, socket.socket):
            request.opened(sock)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already shut, or never connected
        log.debug("shutting a model connection down failed", exc_info=True)
