"""Every fault of a model server as the one line a person can act on: what the
`openai` client raised, what httpx raised while the body was read, and what the body itself
was (empty, no event stream, only keep-alive comments…)."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mm_tui.support.terminal_text import quoted

if TYPE_CHECKING:
    from openai import APIStatusError

log = logging.getLogger(__name__)

HOW_TO_SET_URL = "start it, or set another with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml"
NOT_OPENAI_COMPATIBLE = (
    "the server at {url} is not OpenAI-compatible: it has no /models (HTTP 404: {detail}) — "
    "the base URL usually ends in /v1"
)
NO_CHAT_PATH = (
    "the model server at {url} has no /chat/completions (HTTP 404: {detail}) — "
    "the base URL usually ends in /v1"
)
RETRYABLE_STATUSES = (429, 500, 502, 503, 504)
AFTER_STUCK = "try again; if it goes on, restart the server or look at its log"
EMPTY_BODY = (
    "the model server at {url} sent an empty answer (HTTP {status}, no body) — " + AFTER_STUCK
)
NO_EVENT_AT_ALL = (
    "the model server at {url} ended its answer without a single event ({size} bytes of "
    "keep-alive comments or blank lines) — " + AFTER_STUCK
)
NO_EVENT_IN = (
    "the model server at {url} sent {size} MB without a complete event (comments, blank "
    "lines, or a line that never ends) — stopped; " + AFTER_STUCK
)
NO_EVENT_FOR = (
    "the model server at {url} sent no answer for {seconds:g}s, only keep-alive comments — "
    "stopped; " + AFTER_STUCK
)
NOT_AN_EVENT_STREAM = (
    "the model server at {url} did not answer with an event stream ({kind}: '{first}') — "
    "is the base URL right? it usually ends in /v1"
)
REDIRECTED = (
    "the model server at {url} redirects to {location} (HTTP {status}) — set that address "
    "with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml"
)


@dataclass(frozen=True)
class ModelFault(Exception):
    """A server fault, phrased as the one line the person and the session's `errors` get."""

    message: str
    retryable: bool = False
    status: int | None = None
    body: str = ""

    def __str__(self) -> str:
        return self.message


def not_an_event_stream(url: str, content_type: str, first_line: bytes) -> ModelFault:
    """A body whose first line is no event-stream line (an HTML page, a JSON document…)."""
    kind = quoted(content_type.split(";", 1)[0].strip()[:60] or "no content type")
    first = quoted(first_line.decode("utf-8", "replace").strip()[:80])
    return ModelFault(NOT_AN_EVENT_STREAM.format(url=url, kind=kind, first=first))


def describe(exc: BaseException, *, url: str, timeout: float, model: str | None) -> ModelFault:
    """Turn any exception from the client into one line a person can act on."""
    import openai

    from mm_tui.agent.model_wire import BodyFault

    if isinstance(exc, ModelFault):
        return exc
    if isinstance(exc, BodyFault):
        return ModelFault(f"the model server at {url} {exc}")
    if isinstance(exc, openai.APITimeoutError):
        return ModelFault(
            f"the model server at {url} did not answer within {timeout:g}s — "
            "it may still be loading the model; try again",
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = _root_cause(exc)
        return ModelFault(f"cannot reach the model server at {url} ({cause}) — {HOW_TO_SET_URL}")
    if isinstance(exc, openai.APIStatusError):
        return _status_fault(exc, url, model)
    if isinstance(exc, openai.APIError):
        return ModelFault(
            f"the model server reported an error mid-stream: {quoted(str(exc.message))}"
        )
    if isinstance(exc, json.JSONDecodeError | ValueError):
        return ModelFault(f"the model server sent a malformed chunk ({quoted(str(exc))})")
    name = type(exc).__name__
    if "Timeout" in name:
        return ModelFault(f"the model server at {url} stopped sending for {timeout:g}s mid-answer")
    if "Protocol" in name or "Read" in name or "Connect" in name or isinstance(exc, OSError):
        return ModelFault(f"the connection to the model server at {url} broke mid-stream ({name})")
    return ModelFault(
        f"unexpected failure talking to the model server ({name}: {quoted(str(exc))})"
    )


def _status_fault(exc: APIStatusError, url: str, model: str | None) -> ModelFault:
    status = exc.status_code
    detail = _error_detail(exc)
    body = _body_text(exc)
    if 300 <= status < 400:  # redirects are not followed (model_wire.build_http_client)
        location = quoted(exc.response.headers.get("location", "(no Location)")[:200])
        return ModelFault(
            REDIRECTED.format(url=url, location=location, status=status), status=status
        )
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
    if status == 404 and not _is_json(exc):  # no error object: the path itself is not there
        return ModelFault(NO_CHAT_PATH.format(url=url, detail=detail), status=status, body=body)
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


def _response_text(exc: APIStatusError) -> str:
    try:
        return str(exc.response.text)
    except Exception:  # a body that cannot be read: said as missing
        log.debug("reading an error body failed", exc_info=True)
        return ""


def _is_json(exc: APIStatusError) -> bool:
    try:
        json.loads(_response_text(exc))
    except ValueError:
        return False
    return True


def _error_detail(exc: APIStatusError) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        error = body.get("error", body)
        message = error.get("message") if isinstance(error, dict) else error
        if message:
            return str(message).splitlines()[0][:200]
    if isinstance(body, str) and body.strip():  # a plain-text body, or an `error` string
        return body.strip().splitlines()[0][:200]
    if not _response_text(exc).strip():
        return "empty body"
    return str(getattr(exc, "message", "") or exc).splitlines()[0][:200]


def _body_text(exc: APIStatusError) -> str:
    body = getattr(exc, "body", None)
    try:
        return json.dumps(body) if body is not None else ""
    except (TypeError, ValueError):
        return str(body)
