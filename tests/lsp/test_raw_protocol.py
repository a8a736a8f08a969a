"""The client's own request bookkeeping on pygls' stream (raw_protocol.py), by behaviour.

Our requests are framed and tracked by RawJsonProtocol, not by pygls' `send_request`: these
tests pin the frame the server reads, that every answer (result or error) resolves its
request and leaves nothing behind, that a late answer to an abandoned request is absorbed,
and that a server's end fails whatever still waits.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.client import JsonRPCClient

from mm_tui.lsp.raw_protocol import AnswerError, RawJsonProtocol


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
        assert recorder.sent[0].startswith(b"Content-Length: %d\r\n\r\n" % len(json.dumps(request)))
        assert protocol.pending == 1
        reply = {"jsonrpc": "2.0", "id": "mm-1", "result": {"contents": "int"}}
        protocol.handle_message(protocol.structure_message(reply))
        assert answer.done() and answer.result() == {"contents": "int"}
        assert protocol.pending == 0

    asyncio.run(scenario())


def test_an_error_answer_fails_its_request_with_the_servers_message() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/rename", {}, 7)
        reply = {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "bad name"}}
        protocol.handle_message(protocol.structure_message(reply))
        error = answer.exception()
        assert isinstance(error, AnswerError) and error.message == "bad name"
        assert error.code == -32602
        assert protocol.pending == 0

    asyncio.run(scenario())


def test_a_late_answer_to_an_abandoned_request_is_absorbed() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/definition", {}, "mm-2")
        answer.cancel()  # the caller stopped waiting (time limit, interruption)
        protocol.forget("mm-2")
        reply = {"jsonrpc": "2.0", "id": "mm-2", "result": None}
        protocol.handle_message(protocol.structure_message(reply))
        assert protocol.pending == 0 and answer.cancelled()

    asyncio.run(scenario())


def test_an_answer_with_an_unknown_id_changes_nothing() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        answer = protocol.send_request_on_loop("textDocument/hover", {}, "mm-3")
        for stray in ("mm-9", True, None, [1]):
            reply = {"jsonrpc": "2.0", "id": stray, "result": 1}
            protocol.handle_message(protocol.structure_message(reply))
        assert not answer.done() and protocol.pending == 1

    asyncio.run(scenario())


def test_the_servers_end_fails_every_request_still_waiting() -> None:
    async def scenario() -> None:
        protocol, _ = protocol_with_recorder()
        first = protocol.send_request_on_loop("textDocument/hover", {}, "mm-4")
        second = protocol.send_request_on_loop("textDocument/definition", {}, "mm-5")
        protocol.fail_pending(ConnectionResetError("gone"))
        for answer in (first, second):
            with pytest.raises(ConnectionResetError):
                answer.result()
        assert protocol.pending == 0

    asyncio.run(scenario())


def test_lsprotocol_params_go_out_as_the_json_a_server_reads() -> None:
    async def scenario() -> None:
        protocol, recorder = protocol_with_recorder()
        params = types.InitializeParams(
            capabilities=types.ClientCapabilities(), process_id=None, root_uri="file:///p"
        )
        protocol.send_request_on_loop("initialize", params, "mm-6")
        [request] = recorder.messages()
        assert request["params"]["rootUri"] == "file:///p"
        assert request["params"]["processId"] is None
        assert request["params"]["capabilities"] == {}

    asyncio.run(scenario())
