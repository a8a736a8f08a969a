"""The two private members of pygls the client relies on, pinned by behaviour.

pygls has no public way to resolve a request from an answer decoded outside its own decoder,
nor to drop the result type `send_request` records per request (see raw_protocol.py). pygls is
pinned exactly in pyproject.toml; these tests fail the day an upgrade renames, re-signs or
stops using either member, before a user meets requests that never resolve or a table that
grows by one entry per request.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

from pygls.client import JsonRPCClient
from pygls.protocol import JsonRPCProtocol

from mm_tui.lsp.raw_protocol import RawJsonProtocol

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


class Recorder:
    """A writer that keeps what pygls sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.sent.append(data)

    def close(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(chunk.split(b"\r\n\r\n", 1)[1]) for chunk in self.sent]


def protocol_with_recorder() -> tuple[RawJsonProtocol, Recorder]:
    protocol = JsonRPCClient(protocol_cls=RawJsonProtocol).protocol
    assert isinstance(protocol, RawJsonProtocol)
    recorder = Recorder()
    protocol.set_writer(recorder)
    return protocol, recorder


def test_pygls_is_the_exact_version_the_private_members_were_checked_against() -> None:
    pinned = next(
        line.split("==")[1].split('"')[0]
        for line in PYPROJECT.read_text().splitlines()
        if line.strip().startswith('"pygls==')
    )
    assert version("pygls") == pinned == "2.1.1"


def test_handle_response_keeps_its_signature() -> None:
    parameters = list(inspect.signature(JsonRPCProtocol._handle_response).parameters)
    assert parameters == ["self", "msg_id", "result", "error"]


def test_an_answer_resolves_its_request_and_leaves_no_bookkeeping_behind() -> None:
    async def scenario() -> None:
        protocol, recorder = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/hover", {"x": 1}, "mm-1")
        [request] = recorder.messages()
        assert request == {
            "jsonrpc": "2.0",
            "id": "mm-1",
            "method": "textDocument/hover",
            "params": {"x": 1},
        }
        # send_request records a result type that only a decoder removes: ours must.
        assert "mm-1" in protocol._result_types
        reply = {"jsonrpc": "2.0", "id": "mm-1", "result": {"contents": "int"}}
        protocol.handle_message(protocol.structure_message(reply))
        assert answer.done() and answer.result() == {"contents": "int"}
        assert protocol._result_types == {}
        assert protocol._request_futures == {}

    asyncio.run(scenario())


def test_an_error_answer_fails_its_request_with_the_servers_message() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/rename", {}, 7)
        reply = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad name"}}
        protocol.handle_message(protocol.structure_message(reply))
        error = answer.exception()
        assert error is not None and getattr(error, "message", None) == "bad name"
        assert protocol._result_types == {}
        assert protocol._request_futures == {}

    asyncio.run(scenario())


def test_a_late_answer_to_an_abandoned_request_is_absorbed() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/definition", {}, "mm-2")
        answer.cancel()  # the caller stopped waiting (time limit, interruption)
        reply = {"jsonrpc": "2.0", "id": "mm-2", "result": None}
        protocol.handle_message(protocol.structure_message(reply))
        assert protocol._request_futures == {}

    asyncio.run(scenario())
