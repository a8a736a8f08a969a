"""The model's requests and streams on the `openai` client's own httpx transport: a server that
answers over HTTP/1.0 with a body ending when the connection closes (as `mlx_lm.server` and
every server built on Python's `http.server` do) works in the core, in `-p` and in ACP; the
request on the wire is the one the SDK would send, without the SDK's walk of the history; an
interrupt ends a request and its connection at once; a proxy in the environment is used."""

from __future__ import annotations

import http.client
import http.server
import socket
import threading
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import openai
import pytest

from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.turn_signals import CancelFlag
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.acp.client import RecordingClient, one_turn
from tests.agent.conftest import AgentFactory, assert_valid_history
from tests.faces.helpers import mm
from tests.waiting import wait_until

REQUEST = {"model": "scripted-model", "messages": [{"role": "user", "content": "go"}]}
TEXT = "An answer in a few chunks, with ünïcode — and more."


class _Relay(http.server.BaseHTTPRequestHandler):
    """Relays each request to `upstream` and its answer back as `mlx_lm.server` frames one:
    HTTP/1.0 (`http.server`'s default), no Content-Length and no chunked encoding, the body
    written as it comes and ended by closing the connection. With `proxy`, the request line
    holds the whole URL (a forward proxy)."""

    upstream: ClassVar[str] = ""
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:  # noqa: N802 - stdlib naming
        self.seen.append(f"{self.command} {self.path}")
        target = urllib.parse.urlsplit(self.path if "://" in self.path else self.upstream)
        path = target.path if "://" in self.path else self.path
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80)
        upstream.request(self.command, path, body, dict(self.headers))
        answer = upstream.getresponse()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(name, value)
        self.end_headers()
        while data := answer.read1(65536):
            self.wfile.write(data)
            self.wfile.flush()
        upstream.close()

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:  # quiet
        pass


def relay(upstream: str) -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Relay", (_Relay,), {"seen": seen, "upstream": upstream})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    assert handler.protocol_version == "HTTP/1.0"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def http10_server(model_server: ScriptedServer) -> Iterator[str]:
    """The base URL of an HTTP/1.0, close-delimited server playing `model_server`'s script."""
    for root, _seen in relay(model_server.root_url):
        yield root + "/v1"


@pytest.fixture
def forward_proxy() -> Iterator[tuple[str, list[str]]]:
    yield from relay("")


def read_all(client: ModelClient, cancel: threading.Event | None = None) -> tuple[list, str]:
    """The chunks read and the fault line ("" when none)."""
    chunks: list[dict[str, Any]] = []
    try:
        client.stream(REQUEST, cancel or CancelFlag(), lambda block: bool(chunks.extend(block)))
    except ModelFault as fault:
        return chunks, fault.message
    return chunks, ""


def text_of(chunks: list[dict[str, Any]]) -> str:
    deltas = [c["choices"][0].get("delta", {}) for c in chunks if c.get("choices")]
    return "".join(d.get("content") or "" for d in deltas)


def a_conversation_with_a_tool_call(model_server: ScriptedServer) -> None:
    model_server.enqueue(
        Reply(text="Let me look.", tool_calls=[ToolCall("echo", {"text": "hi"})], chunk_size=4),
        Reply(text=TEXT, chunk_size=3),
    )


def test_a_close_delimited_http10_server_carries_a_whole_turn(
    http10_server: str, model_server: ScriptedServer, make_agent: AgentFactory
) -> None:
    a_conversation_with_a_tool_call(model_server)
    agent, _events = make_agent(base_url=http10_server)

    ended = agent.run_turn("go")

    assert ended.reason == "answered", ended.error
    assert agent.messages[-1]["content"] == TEXT
    assert agent.messages[-2] == {"role": "tool", "tool_call_id": agent.messages[-3][
        "tool_calls"][0]["id"], "content": "hi"}  # fmt: skip
    assert_valid_history(agent.messages)


def test_a_close_delimited_http10_server_carries_a_turn_in_print_mode(
    http10_server: str, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(
        Reply(text="Let me look.", tool_calls=[ToolCall("bash", {"command": "echo hi"})]),
        Reply(text=TEXT, chunk_size=3),
    )
    result = mm("-p", "go", "--yolo", "--base-url", http10_server, "--model", "m", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert TEXT in result.stdout


def test_a_close_delimited_http10_server_carries_a_turn_over_acp(
    http10_server: str, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text=TEXT, chunk_size=3))
    client = RecordingClient()
    assert one_turn(client, tmp_path, http10_server, "go") == "end_turn"
    assert client.message_text().startswith(TEXT)


def test_the_body_on_the_wire_is_the_one_the_sdk_would_send(model_server: ScriptedServer) -> None:
    """Headers and JSON bytes, key order included, are those of `chat.completions.create`
    on the same client, for a request with every key the core sends."""
    request = {
        **REQUEST,
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "héllo ✓"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "echo", "arguments": "{}"},
                    }
                ],
            },  # fmt: skip
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ],
        "tools": [{"type": "function", "function": {"name": "echo", "parameters": {}}}],
        "temperature": 0.2,
        "stream_options": {"include_usage": True},
    }
    wire: list[tuple[bytes, bytes]] = []
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        for _ in range(2):
            connection, _ = listener.accept()
            with connection:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += connection.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(body) < length:
                    body += connection.recv(65536)
                wire.append((head, body))
                connection.sendall(
                    b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"
                    b'data: {"choices": [{"delta": {}, "finish_reason": "stop"}]}\n\n'
                )

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    client = ModelClient(f"http://127.0.0.1:{listener.getsockname()[1]}/v1", "key", timeout=10)
    try:
        client.stream(request, CancelFlag(), lambda chunks: False)
        with client.client.chat.completions.with_streaming_response.create(
            **request, stream=True
        ) as response:
            response.read()
        thread.join(10)
    finally:
        listener.close()

    ours, sdks = wire
    assert ours == sdks
    assert b"authorization: Bearer key" in ours[0].lower().replace(b"bearer", b"Bearer")


def test_the_sdk_does_not_walk_the_history_on_each_request(
    model_server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`maybe_transform` walks every value of a request (O(n) per request, O(n²) a
    session): counted here where the SDK calls it, on a real request each way."""
    import openai._utils._transform as transform

    walked: list[int] = []
    original = transform._transform_recursive

    def counting(*args: Any, **kwargs: Any) -> Any:
        walked.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(transform, "_transform_recursive", counting)
    history = [{"role": "user" if n % 2 else "assistant", "content": f"message {n}"}
               for n in range(400)]  # fmt: skip
    request = {**REQUEST, "messages": history}
    model_server.enqueue(Reply(text="ok"), Reply(text="ok"))
    client = ModelClient(model_server.base_url, "x", timeout=10)

    client.stream(request, CancelFlag(), lambda chunks: False)
    assert walked == []
    client.client.chat.completions.create(**request, stream=True).close()
    assert len(walked) > len(history)  # the SDK's own road walks each message, and more


def test_an_unreachable_server_says_so_in_one_line() -> None:
    url = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    assert read_all(ModelClient(url, "x", timeout=0.5)) == (
        [],
        f"cannot reach the model server at {url} (connection refused) — "
        "start it, or set another with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml",
    )


@pytest.mark.parametrize("when", ["before the first byte", "mid-stream"])
def test_an_interrupt_ends_the_request_and_its_connection_at_once(
    when: str, model_server: ScriptedServer
) -> None:
    if when == "before the first byte":
        model_server.enqueue(Reply(text=TEXT, stall=60.0))
    else:
        model_server.enqueue(Reply(text="word " * 2000, chunk_size=5, delay=0.05))
    client = ModelClient(model_server.base_url, "x", timeout=120.0)
    cancel = CancelFlag()
    seen: list[dict[str, Any]] = []
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            client.stream(REQUEST, cancel, lambda chunks: bool(seen.extend(chunks)))
        except BaseException as exc:
            outcome.append(exc)

    turn = threading.Thread(target=run)
    turn.start()
    model_server.wait_for_requests(1)
    if when == "mid-stream":
        wait_until(lambda: seen, "a chunk handed over", timeout=60, interval=0.01)
    readers = [t for t in threading.enumerate() if t.name == "mm-model-stream"]
    cancel.set()
    turn.join(5)

    assert not turn.is_alive() and isinstance(outcome[0], Interrupted)
    for reader in readers:  # the connection was shut: the reader does not wait for the server
        reader.join(10)
        assert not reader.is_alive()
    count = len(seen)
    threading.Event().wait(0.2)
    assert len(seen) == count  # nothing is handed over once the caller has left


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_carries_the_request(
    variable: str,
    model_server: ScriptedServer,
    forward_proxy: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy_url, seen = forward_proxy
    monkeypatch.setenv(variable, proxy_url)
    model_server.enqueue(Reply(text=TEXT, chunk_size=3))

    chunks, fault = read_all(ModelClient(model_server.base_url, "x", timeout=5))

    assert fault == "" and text_of(chunks) == TEXT
    assert seen == [f"POST {model_server.base_url}/chat/completions"]


def test_the_sdk_errors_keep_their_types_through_the_lower_level_request(
    model_server: ScriptedServer,
) -> None:
    """A status fault is raised by the SDK as its own class, described as before."""
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "bad key"}}))
    client = ModelClient(model_server.base_url, "x", timeout=5)
    from mm_tui.agent.model_wire import chat_request

    with pytest.raises(openai.AuthenticationError):
        chat_request(client.client, REQUEST)
    model_server.enqueue(Reply(status=401, error_body={"error": {"message": "bad key"}}))
    assert read_all(client)[1].startswith(
        f"the model server at {model_server.base_url} refused the API key (HTTP 401: bad key)"
    )
