"""The conversation with a server read by the asking thread itself (channel.py, framing.py).

The hard cases of one reader at a time, each against a server process that produces it on
cue (fixtures/interleaving_server.py): what the server says before an answer is handled in
order, a server dying mid-answer is said in one line, an interrupt ends a waiting request (and
the server hears of it), and the server's own requests are answered while no call is in
flight. The frames themselves are checked byte by byte.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from mm_tui.lsp.answers import Failed, Interrupted, Text
from mm_tui.lsp.framing import FrameReader, frame
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES
from tests.processes import process_group_members
from tests.waiting import holds_within, wait_until

SOURCE = "def greet(name):\n    return name\n\ngreet('x')\n"
DEFINITION = LspQuery("definition", "a.py", "greet", line=4)


class Fake:
    """A workspace over interleaving_server.py in one mode, and the server's log."""

    def __init__(self, folder: Path, mode: str) -> None:
        padding = "#" * 4_000_000 + "\n" if mode == "flood" else ""  # a 4 MB file to send
        (folder / "a.py").write_text(SOURCE + padding)
        self.log = folder / "server.log"
        command = (sys.executable, str(FIXTURES / "interleaving_server.py"), mode, str(self.log))
        spec = LspServerSpec(name="interleaving", command=command, extensions=(".py",))
        self.workspace = LspWorkspace([spec], folder)

    def received(self) -> list[dict[str, Any]]:
        """Every message the server got from the client so far."""
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def reply_to(self, ident: str) -> dict[str, Any] | None:
        return next(
            (m for m in self.received() if m.get("id") == ident and "method" not in m), None
        )


@pytest.fixture
def fake(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Fake]:
    server = Fake(tmp_path, request.param)
    try:
        yield server
    finally:
        server.workspace.close()


# ---- frames ---------------------------------------------------------------------------------


def test_frames_cut_anywhere_come_out_whole_and_in_order() -> None:
    messages = [{"jsonrpc": "2.0", "id": n, "result": {"text": "é🎉" * n}} for n in range(5)]
    stream = b"".join(frame(message) for message in messages)
    reader = FrameReader()
    out = []
    for byte in range(len(stream)):  # one byte at a time: every cut a pipe could make
        reader.feed(stream[byte : byte + 1])
        while (message := reader.next_message()) is not None:
            out.append(message)
    assert out == messages


def test_junk_between_frames_is_skipped_and_the_next_frame_read() -> None:
    reader = FrameReader()
    reader.feed(b"this is not a header\r\n\r\n")
    reader.feed(b"Content-Length: 9\r\n\r\n{not json")
    reader.feed(b"Content-Length: 5\r\n\r\n[1,2]")  # JSON, but not a message
    reader.feed(b"junk" + frame({"jsonrpc": "2.0", "id": "mm-1", "result": None}))
    assert reader.next_message() == {"jsonrpc": "2.0", "id": "mm-1", "result": None}
    assert reader.next_message() is None


def read_all(reader: FrameReader, stream: bytes, step: int) -> list[dict[str, Any]]:
    out = []
    for at in range(0, len(stream), step):
        reader.feed(stream[at : at + step])
        while (message := reader.next_message()) is not None:
            out.append(message)
    return out


@pytest.mark.parametrize("step", [1, 7, 1 << 16])
def test_a_frame_declaring_more_than_it_sent_does_not_swallow_the_frames_after_it(
    step: int,
) -> None:
    """A lying length used to make the reader wait for bytes that were the next frames: every
    later answer was lost and each request ran out of time. A whole header inside a body still
    coming ends that body (raw CR LF cannot stand in JSON text)."""
    lying = {"jsonrpc": "2.0", "id": "mm-1", "result": {"contents": "x\r\n\r\nContent-Length: 3"}}
    body = json.dumps(lying).encode()
    after = [{"jsonrpc": "2.0", "id": f"mm-{n}", "result": n} for n in range(2, 5)]
    stream = b"Content-Length: %d\r\n\r\n%b" % (len(body) + 500, body)
    stream += b"".join(frame(message) for message in after)

    assert read_all(FrameReader(), stream, step) == [lying, *after]


@pytest.mark.parametrize("step", [1, 1 << 16])
def test_a_header_declaring_an_impossible_length_is_skipped(step: int) -> None:
    good = {"jsonrpc": "2.0", "id": "mm-2", "result": None}
    for header in (
        b"Content-Length: 99999999999\r\n\r\n",
        b"X: y\r\ncontent-length: 9999999999\r\n\r\n",
    ):
        stream = header + b'{"jsonrpc": "2.0"}' + frame(good)
        assert read_all(FrameReader(), stream, step) == [good]


def test_a_body_holding_header_words_inside_its_strings_is_read_whole() -> None:
    """What looks like a header inside a JSON string (escaped CR LF) ends nothing."""
    message = {"jsonrpc": "2.0", "id": 1, "result": "Content-Length: 5\r\n\r\n" * 3}
    stream = frame(message) * 2
    assert read_all(FrameReader(), stream, 3) == [message, message]


def test_a_frame_is_ascii_json_after_its_length() -> None:
    data = frame({"jsonrpc": "2.0", "method": "m", "params": {"text": "café"}})
    header, body = data.split(b"\r\n\r\n", 1)
    assert header == b"Content-Length: %d" % len(body)
    assert body.isascii() and json.loads(body)["params"]["text"] == "café"


def test_lsprotocol_params_go_out_as_the_json_a_server_reads() -> None:
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(), process_id=None, root_uri="file:///p"
    )
    body = json.loads(
        frame({"id": 1, "method": "initialize", "params": params}).split(b"\r\n\r\n")[1]
    )
    assert body["params"]["rootUri"] == "file:///p"
    assert body["params"]["processId"] is None
    assert body["params"]["capabilities"] == {}


# ---- one reader at a time, against a server process -----------------------------------------


@pytest.mark.parametrize("fake", ["interleave"], indirect=True)
def test_what_the_server_says_before_an_answer_is_handled_in_order(fake: Fake) -> None:
    # Before answering, the server publishes diagnostics and asks its configuration; it
    # answers only once the client answered it: the reader handled both on the way.
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    assert fake.reply_to("ask-1") == {"jsonrpc": "2.0", "id": "ask-1", "result": [None]}
    diagnostics = fake.workspace.execute(LspQuery("diagnostics", "a.py"))
    assert diagnostics == Text(
        "1 diagnostic(s) in a.py (as last published):\nerror a.py:1:1 told before the answer"
    )


@pytest.mark.parametrize("fake", ["die"], indirect=True)
def test_a_server_dying_mid_answer_is_said_in_one_line(fake: Fake) -> None:
    answer = fake.workspace.execute(DEFINITION)
    assert answer == Failed(
        "[lsp: interleaving: definition failed: the server exited with status 7 "
        "(stderr: dying mid-answer)]"
    )


@pytest.mark.parametrize("fake", ["hold"], indirect=True)
def test_an_interrupt_ends_a_waiting_request_and_the_server_hears_of_it(fake: Fake) -> None:
    cancel = threading.Event()

    def interrupt_once_asked() -> None:
        asked = lambda: any(m.get("method") == "textDocument/definition" for m in fake.received())  # noqa: E731
        if holds_within(asked, timeout=10, interval=0.02):
            cancel.set()

    threading.Thread(target=interrupt_once_asked, daemon=True).start()
    assert fake.workspace.execute(DEFINITION, cancel) == Interrupted()
    [request] = [m for m in fake.received() if m.get("method") == "textDocument/definition"]
    cancels = lambda: [m["params"] for m in fake.received() if m.get("method") == "$/cancelRequest"]  # noqa: E731
    wait_until(
        cancels,
        "one cancel, of that request",
        until=lambda c: c == [{"id": request["id"]}],
        timeout=10,
        interval=0.02,
    )
    # The conversation goes on: the next request gets its own answer.
    assert fake.workspace.execute(LspQuery("hover", "a.py", "greet", line=4)) == Text(
        "held, then answered"
    )


@pytest.mark.parametrize("fake", ["idle"], indirect=True)
def test_the_servers_requests_are_answered_while_no_call_is_in_flight(fake: Fake) -> None:
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    # No call now (the model is thinking): the server asks four things 0.3 s later.
    wait_until(
        lambda: fake.reply_to("idle-4"),
        "the reply to the server's idle-4",
        until=lambda reply: reply is not None,
        timeout=10,
        interval=0.02,
    )
    assert fake.reply_to("idle-1") == {"jsonrpc": "2.0", "id": "idle-1", "result": [None]}
    assert fake.reply_to("idle-2") == {"jsonrpc": "2.0", "id": "idle-2", "result": None}
    assert fake.reply_to("idle-3") == {"jsonrpc": "2.0", "id": "idle-3", "result": None}
    applied = fake.reply_to("idle-4")
    assert applied is not None and applied["result"]["applied"] is False


@pytest.mark.parametrize("fake", ["flood"], indirect=True)
def test_a_big_file_goes_out_while_the_server_floods_us_and_neither_side_blocks(
    fake: Fake,
) -> None:
    # The server writes 4 MB before reading on; the client sends a 4 MB file meanwhile. A
    # client that only wrote (holding the one reader's place) would wait for ever: both pipes
    # full. The write reads the server's output as it goes, and the call is answered.
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    [opened] = [m for m in fake.received() if m.get("method") == "textDocument/didOpen"]
    assert opened["params"]["textDocument"]["text"] == len(SOURCE) + 4_000_001


@pytest.mark.parametrize("fake", ["interleave"], indirect=True)
def test_closing_asks_the_server_to_shut_down_and_waits_for_its_answer(fake: Fake) -> None:
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    assert fake.workspace.close() == {"interleaving": 0}
    methods = [m.get("method") for m in fake.received() if "method" in m]
    assert methods[-2:] == ["shutdown", "exit"]  # shutdown answered, not given up on


@pytest.mark.parametrize("fake", ["orphan"], indirect=True)
def test_a_server_dead_between_calls_is_restarted_even_when_a_child_keeps_its_stdout(
    fake: Fake,
) -> None:
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    [pid] = fake.workspace.server_pids().values()
    os.kill(pid, signal.SIGKILL)  # the server only: its child keeps the pipes open
    wait_until(
        lambda: process_group_members(pid),
        "the killed server out of its group",
        until=lambda members: pid not in members,
        timeout=10,
        interval=0.02,
    )
    time.sleep(0.2)  # no call meanwhile: nothing but the idle reader can notice
    assert fake.workspace.execute(DEFINITION) == Text("a.py:1:5  def greet(name):")
    starts = [m for m in fake.received() if m.get("method") == "initialize"]
    assert len(starts) == 2
