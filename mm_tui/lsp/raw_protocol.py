"""pygls' JSON-RPC engine, with every incoming message kept as plain JSON.

Why: pygls 2.1 decodes each incoming message into lsprotocol classes inside its reader. When
that fails — python-lsp-server's `initialize` answer does, on its `notebookDocumentSync`
filter, with lsprotocol 2025.0.0 — the message is dropped and the request never resolves.
Kept as plain JSON, every answer arrives; each action then reads what it needs, leniently,
and an odd answer becomes a failure line instead of a silent hang.

Requests go out through pygls' public `send_request`. Two private members of
`JsonRPCProtocol` are used, because pygls has no public way to do the same: `_handle_response`
(resolve the request an answer belongs to) and `_result_types` (the expected result type
`send_request` records per request and only its own decoder removes). pygls is pinned to the
exact version in pyproject.toml, and tests/lsp/test_pygls_private_members.py fails when either
changes.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from lsprotocol.types import ResponseError
from pygls.protocol import JsonRPCProtocol
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, MsgId

log = logging.getLogger(__name__)

_INTERNAL_ERROR = -32603


@dataclass(frozen=True)
class RawResponse:
    """An answer to one of our requests, as the server sent it."""

    id: Any
    result: Any = None
    error: ResponseError | None = None


class RawJsonProtocol(JsonRPCProtocol):
    """A JSON-RPC protocol whose incoming params and results stay dicts and lists."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Wrap a decoded JSON object in plain message classes, never failing."""
        if "jsonrpc" not in data:
            return data  # a nested object of some message: left as is
        version = str(data["jsonrpc"])
        if "method" in data:
            method = str(data["method"])
            if "id" in data:
                return JsonRPCRequestMessage(
                    id=data["id"], method=method, jsonrpc=version, params=data.get("params")
                )
            return JsonRPCNotification(method=method, jsonrpc=version, params=data.get("params"))
        if "error" in data:
            return RawResponse(data.get("id"), error=_response_error(data["error"]))
        return RawResponse(data.get("id"), result=data.get("result"))

    def handle_message(self, message: Any) -> None:
        """Answers go straight to their request; the rest takes pygls' way.

        pygls tells message kinds apart with runtime-checkable Protocols, whose isinstance
        checks cost tens of microseconds each in Python 3.11: more than a warm server takes
        to answer. Here the kind is known from the class `structure_message` chose.
        """
        if not isinstance(message, RawResponse):
            super().handle_message(message)
            return
        message_id = message.id
        if isinstance(message_id, bool) or not isinstance(message_id, str | int):
            log.debug("an answer without a usable id was dropped: %r", message)
            return
        self._result_types.pop(message_id, None)  # private: see the module's docstring
        self._handle_response(message_id, message.result, message.error)  # private: idem

    def send_request_on_loop(
        self, method: str, params: Any, message_id: MsgId
    ) -> asyncio.Future[Any]:
        """`send_request`, but answered through an asyncio future of the running loop.

        pygls resolves a `concurrent.futures.Future` from the reader, which runs on this same
        loop: its done-callback settles the asyncio future directly, without the thread-safe
        wake-up `asyncio.wrap_future` would cost per answer.
        """
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def settle(done: Future[Any]) -> None:
            if answer.done():  # abandoned by its caller (timeout, cancel): nobody waits
                return
            error = None if done.cancelled() else done.exception()
            if done.cancelled():
                answer.cancel()
            elif error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(done.result())

        self.send_request(method, params, msg_id=message_id).add_done_callback(settle)
        return answer


def _response_error(error: Any) -> ResponseError:
    """An error answer as lsprotocol's ResponseError, whatever shape the server gave it."""
    if not isinstance(error, dict):
        return ResponseError(code=_INTERNAL_ERROR, message=str(error))
    code = error.get("code")
    return ResponseError(
        code=code if isinstance(code, int) else _INTERNAL_ERROR,
        message=str(error.get("message") or "unknown error"),
        data=error.get("data"),
    )
