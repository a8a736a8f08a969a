"""pygls' JSON-RPC engine, with every incoming message kept as plain JSON.

Why: pygls 2.1 decodes each incoming message into lsprotocol classes inside its reader. When
that fails — python-lsp-server's `initialize` answer does, on its `notebookDocumentSync`
filter, with lsprotocol 2025.0.0 — the message is dropped and the request never resolves.
Kept as plain JSON, every answer arrives; each action then reads what it needs, leniently,
and an odd answer becomes a failure line instead of a silent hang.

Our own requests are framed and tracked here, not by pygls' `send_request`: pygls resolves a
`concurrent.futures.Future` (a lock and a thread-safe wake-up per answer) after turning the
params into attrs messages through cattrs, which cost more than a warm server takes to answer
(issue 13's bench). An answer resolves an asyncio future of the loop directly, and no private
member of pygls is needed. pygls still reads the stream, sends notifications and answers the
server's own requests (server_requests.py).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from dataclasses import dataclass
from typing import Any

from lsprotocol import converters
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


class AnswerError(Exception):
    """The server answered a request with an error."""

    def __init__(self, error: ResponseError) -> None:
        super().__init__(error.message)
        self.message = error.message
        self.code = error.code


class RawJsonProtocol(JsonRPCProtocol):
    """A JSON-RPC protocol whose incoming params and results stay dicts and lists."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._answers: dict[MsgId, asyncio.Future[Any]] = {}

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
        answer = None
        if isinstance(message_id, str | int) and not isinstance(message_id, bool):
            answer = self._answers.pop(message_id, None)
        if answer is None or answer.done():  # unknown, or abandoned by its caller
            log.debug("an answer nobody waits for was dropped: %r", message)
        elif message.error is not None:
            answer.set_exception(AnswerError(message.error))
        else:
            answer.set_result(message.result)

    def send_request_on_loop(
        self, method: str, params: Any, message_id: MsgId
    ) -> asyncio.Future[Any]:
        """Send a request; its answer resolves the returned future of the running loop.

        A caller that stops waiting calls `forget`; a late answer is then dropped.
        """
        answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        message = {"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}
        body = json.dumps(message, default=_plain).encode()  # ASCII: escapes kept
        writer = self.writer
        if writer is None:
            raise BrokenPipeError("no writer")
        self._answers[message_id] = answer
        writer.write(b"Content-Length: %d\r\n\r\n%b" % (len(body), body))
        return answer

    def forget(self, message_id: MsgId) -> None:
        """Stop tracking a request whose caller no longer waits."""
        self._answers.pop(message_id, None)

    def fail_pending(self, error: BaseException) -> None:
        """Fail every request still waiting (the server is gone: no answer will come)."""
        answers, self._answers = self._answers, {}
        for answer in answers.values():
            if not answer.done():
                answer.set_exception(error)

    @property
    def pending(self) -> int:
        """How many requests wait for an answer."""
        return len(self._answers)


def _plain(value: Any) -> Any:
    """An lsprotocol object (initialize's params) as the JSON the server reads."""
    return _converter().unstructure(value)


@functools.cache
def _converter() -> Any:
    return converters.get_converter()


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
