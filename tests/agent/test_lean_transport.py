"""The lean transport under the `openai` client (issue 16): every answer and every fault reads
the same through it as through httpx's own transport, and an interrupt ends a request at once,
whether its first byte came or not."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import httpx2
import openai
import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.lean_transport import BodyCut, BodyFraming, LeanTransport
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault, lean_transport_fits
from mm_tui.agent.turn_signals import CancelFlag
from mm_tui.scripted_server import Reply, ScriptedServer, ToolCall
from mm_tui.window.ports import WINDOW_READ_PACE, live_factory
from tests.waiting import wait_until

REQUEST = {"model": "scripted-model", "messages": [{"role": "user", "content": "go"}]}
TEXT = "An answer in a few chunks, with ünïcode — and more."

REPLIES = {
    "text": Reply(text=TEXT, chunk_size=3),
    "reasoning and a tool call": Reply(
        reasoning="think", tool_calls=[ToolCall("echo", {"text": "hi"}, id="call_1")], chunk_size=5
    ),
    "cut stream": Reply(text=TEXT, fault="no_done"),
    "error event": Reply(text=TEXT, fault="error_event"),
    "malformed chunk": Reply(text=TEXT, fault="malformed_chunk"),
    "disconnect mid-stream": Reply(text=TEXT, fault="disconnect"),
    "401": Reply(status=401, error_body={"error": {"message": "bad key"}}),
    "400 without an error object": Reply(status=400, error_body={"detail": "no tools"}),
    "404": Reply(status=404),
    "429": Reply(status=429),
    "500": Reply(status=500),
    "stall before the first byte": Reply(text=TEXT, stall=2.0),
}


def read_all(client: ModelClient, cancel: threading.Event | None = None) -> tuple[list, str]:
    """The chunks read and the fault line ("" when none)."""
    chunks: list[dict[str, Any]] = []

    def take(block: list[dict[str, Any]]) -> bool:
        chunks.extend({k: v for k, v in c.items() if k not in ("id", "created")} for c in block)
        return False  # (each reply has its own id and time)

    try:
        client.stream(REQUEST, cancel or CancelFlag(), take)
    except ModelFault as fault:
        return chunks, fault.message
    return chunks, ""


def through_httpx(base_url: str, timeout: float) -> ModelClient:
    """A ModelClient whose `openai` client keeps httpx's own transport (the former wire)."""
    client = ModelClient(base_url, "x", timeout=timeout)
    client._client = openai.OpenAI(base_url=base_url, api_key="x", timeout=timeout, max_retries=0)
    return client


@pytest.mark.parametrize("name", REPLIES)
def test_every_answer_and_fault_reads_the_same_as_through_httpx(
    name: str, model_server: ScriptedServer
) -> None:
    model_server.enqueue(REPLIES[name], REPLIES[name])

    lean = read_all(ModelClient(model_server.base_url, "x", timeout=0.5))
    former = read_all(through_httpx(model_server.base_url, 0.5))

    assert lean == former
    assert lean[0] or lean[1]  # something was read or said


def test_an_unreachable_server_reads_the_same_as_through_httpx() -> None:
    url = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    lean = read_all(ModelClient(url, "x", timeout=0.5))
    assert lean == read_all(through_httpx(url, 0.5))
    assert lean[1] == f"cannot reach the model server at {url} (connection refused) — " + (
        "start it, or set another with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml"
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


def test_a_cancel_flag_wakes_what_waits_with_it() -> None:
    cancel, woken = CancelFlag(), threading.Event()
    with cancel.also_sets(woken):
        threading.Timer(0.05, cancel.set).start()
        assert woken.wait(10)
    late, already = threading.Event(), CancelFlag()
    already.set()
    with already.also_sets(late):
        assert late.is_set()


BODY = b'data: {"a": 1}\n\ndata: {"b": "\xc3\xa9"}\n\n' * 3


def chunked(body: bytes, sizes: list[int], end: bytes = b"\r\n") -> bytes:
    """`body` in chunked transfer encoding, cut into pieces of `sizes` (then the rest)."""
    out, at = b"", 0
    for size in [*sizes, len(body)]:
        piece = body[at : at + size]
        if piece:
            out += f"{len(piece):x};ext=1".encode() + end + piece + end
        at += len(piece)
    return out + b"0" + end + b"Trailer: x" + end + end


def framed(framing: BodyFraming, wire: bytes, cuts: list[int]) -> bytes:
    out, at = b"", 0
    for cut in [*cuts, len(wire)]:
        out += framing.feed(wire[at:cut])
        at = cut
    return out


@pytest.mark.parametrize("end", [b"\r\n", b"\n"], ids=["CRLF", "LF"])
def test_a_chunked_body_reads_whole_however_the_reads_cut_it(end: bytes) -> None:
    wire = chunked(BODY, [1, 7, 30, 2], end) + b"after the end"
    for cut in range(len(wire) + 1):
        framing = BodyFraming(chunked=True, length=None)
        assert framed(framing, wire, [cut]) == BODY, cut
        assert framing.complete
    framing = BodyFraming(chunked=True, length=None)
    assert framed(framing, wire, list(range(len(wire)))) == BODY and framing.complete


def test_a_body_cut_before_its_end_is_a_protocol_fault_and_a_bad_size_too() -> None:
    wire = chunked(BODY, [10])
    framing = BodyFraming(chunked=True, length=None)
    assert framing.feed(wire[:25]) and not framing.complete
    with pytest.raises(BodyCut, match="incomplete chunked read"):
        framing.end()
    with pytest.raises(ValueError):
        BodyFraming(chunked=True, length=None).feed(b"zz\r\nhello\r\n")
    with pytest.raises(ValueError):
        BodyFraming(chunked=True, length=None).feed(b"2\r\nhello\r\n")  # data past its size


def test_a_body_with_a_length_ends_there_and_one_without_ends_with_the_connection() -> None:
    framing = BodyFraming(chunked=False, length=5)
    assert framing.feed(b"hel") == b"hel" and not framing.complete
    with pytest.raises(BodyCut):
        framing.end()
    assert framing.feed(b"lo and more") == b"lo" and framing.complete
    framing = BodyFraming(chunked=False, length=None)
    assert framing.feed(b"all of it") == b"all of it" and not framing.complete
    framing.end()  # the connection's close is the end: no fault


class _ForwardProxy(http.server.BaseHTTPRequestHandler):
    """A plain HTTP forward proxy: the request line holds the whole URL, the answer is relayed
    as it arrives and ends with the connection (HTTP/1.0)."""

    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        target = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80)
        upstream.request(self.command, target.path, body, dict(self.headers))
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


@pytest.fixture
def forward_proxy() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Proxy", (_ForwardProxy,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_a_proxy_in_the_environment_carries_the_request_as_it_did_through_httpx(
    variable: str,
    model_server: ScriptedServer,
    forward_proxy: tuple[str, list[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """httpx reads no proxy from the environment once given a transport: with one set, the
    lean transport steps aside and the request goes through the proxy."""
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    proxy_url, seen = forward_proxy
    monkeypatch.setenv(variable, proxy_url)
    model_server.enqueue(REPLIES["text"])

    chunks, fault = read_all(ModelClient(model_server.base_url, "x", timeout=5))

    assert fault == ""
    assert (
        "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
        == TEXT
    )
    assert seen == [f"POST {model_server.base_url}/chat/completions"]


def test_the_lean_transport_carries_plain_http_only_without_a_proxy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert lean_transport_fits("http://127.0.0.1:8080/v1")
    assert not lean_transport_fits("https://api.example.com/v1")
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:3128")  # not for plain http
    assert lean_transport_fits("http://127.0.0.1:8080/v1")
    monkeypatch.setenv("all_proxy", "socks5://127.0.0.1:1080")
    assert not lean_transport_fits("http://127.0.0.1:8080/v1")


@pytest.mark.parametrize("pace", [0.05, WINDOW_READ_PACE])
def test_a_flowing_event_stream_is_read_at_most_once_per_pace_and_whole(
    pace: float, model_server: ScriptedServer
) -> None:
    """The pace a client asks for (the window's `WINDOW_READ_PACE`, `-p`'s default): a model
    sending a chunk every 10 ms is read in blocks no closer together than the pace, the first
    at once, and nothing is lost or reordered."""
    text = "".join(f"word{n} " for n in range(80))
    model_server.enqueue(Reply(text=text, chunk_size=7, delay=0.01))
    request = {**REQUEST, "stream": True}
    with httpx2.Client(transport=LeanTransport(pace=pace)) as client:
        started = time.monotonic()
        with client.stream("POST", f"{model_server.base_url}/chat/completions", json=request) as r:
            blocks = list(r.iter_raw())
        took = time.monotonic() - started
    events = [line[6:] for line in b"".join(blocks).split(b"\n") if line.startswith(b"data: {")]
    got = "".join(
        (json.loads(event)["choices"] or [{}])[0].get("delta", {}).get("content") or ""
        for event in events
    )
    assert got == text
    assert 1 < len(blocks) <= 2 + took / pace  # each read waits out the pace after the last


def test_the_window_reads_the_model_less_often_than_it_draws(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    """The window's core (ports.live_factory) reads at `WINDOW_READ_PACE`; `-p`'s keeps the
    transport's own pace (its text shows as it is read)."""
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())
    agent = live_factory(config, tmp_path)(lambda event: None)
    assert isinstance(agent, Agent)
    assert agent.client.read_pace == WINDOW_READ_PACE
    assert agent.client.client is not None  # built, with its transport at that pace
    assert ModelClient(model_server.base_url, "x").read_pace is None
