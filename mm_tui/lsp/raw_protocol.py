"""pygls' JSON-RPC engine, with every incoming message kept as plain JSON.

Why: pygls 2.1 decodes each incoming message into lsprotocol classes inside its reader. When
that fails — python-lsp-server's `initialize` answer does, on its `notebookDocumentSync`
filter, with lsprotocol 2025.0.0 — the message is dropped and the request never resolves.
Kept as plain JSON, every answer arrives; each action then reads what it needs, leniently,
and an odd answer becomes a failure line instead of a silent hang.
"""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol.types import ResponseError, ResponseErrorMessage
from pygls.protocol import JsonRPCProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    MsgId,
)

_INTERNAL_ERROR = -32603


class RawJsonProtocol(JsonRPCProtocol):
    """A JSON-RPC protocol whose incoming params and results stay dicts and lists."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Wrap a decoded JSON object in pygls' generic message classes, never failing."""
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
        message_id = data.get("id")
        self._result_types.pop(message_id, None)
        if "error" in data:
            return ResponseErrorMessage(id=message_id, error=_response_error(data["error"]))
        return JsonRPCResponseMessage(id=message_id, jsonrpc=version, result=data.get("result"))

    def handle_message(self, message: Any) -> None:
        """Answers go straight to their request; the rest takes pygls' way.

        pygls tells message kinds apart with runtime-checkable Protocols, whose isinstance
        checks cost tens of microseconds each in Python 3.11: more than a warm server takes
        to answer. Here the kind is known from the class `structure_message` chose.
        """
        if isinstance(message, JsonRPCResponseMessage):
            self._handle_response(message.id, message.result)
        elif isinstance(message, ResponseErrorMessage):
            self._handle_response(message.id, None, message.error)
        else:
            super().handle_message(message)

    def send_request_on_loop(
        self, method: str, params: Any, message_id: MsgId
    ) -> asyncio.Future[Any]:
        """`send_request`, but answered through an asyncio future of the running loop.

        pygls resolves a `concurrent.futures.Future`; awaiting it on the loop would cost a
        thread-safe wake-up per answer although reader and caller share the loop's thread.
        """
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._request_futures[message_id] = answer  # type: ignore[assignment]
        self._send_data(
            JsonRPCRequestMessage(id=message_id, method=method, jsonrpc=self.VERSION, params=params)
        )
        return answer

    def forget_request(self, message_id: MsgId) -> None:
        """Stop tracking a request whose answer we no longer wait for."""
        self._request_futures.pop(message_id, None)
        self._result_types.pop(message_id, None)


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
