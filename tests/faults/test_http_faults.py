"""A model server that misbehaves at the HTTP level (a real socket on 127.0.0.1, the real
`openai` client): each fault ends the turn with one clear line, soon, with the history valid,
nothing held in memory past a bound, and the next turn works.

The bounds: an empty body, a redirect, a page that is no event stream end the turn as soon as
the answer's head (and the first bytes of its body) came; 5xx are retried as any 5xx is. A
server that sends only keep-alive comments is cut after twice the request timeout without an
event; one that sends 4 MB without a complete event (a line that never ends, blank lines) is
cut there; a compressed body is inflated 64 KB at a time, so nothing of it past those 4 MB is
held; an error answer is read 64 KB at most. Here the request timeout is 0.5 s."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.events import Notice, TextDelta, TurnEnded
from mm_tui.agent.session import read_session_document
from tests.agent.conftest import AgentFactory, Recorder, assert_valid_history
from tests.faults.fixtures.hostile_http import (
    CHUNKED,
    RECOVERED,
    Answer,
    HostileServer,
    chunk,
    forever,
    gzip_bomb,
    head,
    sse,
)

TIMEOUT = 0.5
EVENT_STREAM = "Content-Type: text/event-stream"
EMPTY = "Content-Length: 0"
HTML = b"<!DOCTYPE html>\n<html><head><title>Open WebUI</title></head><body>hi</body></html>\n"
CHUNK = sse({"choices": [{"index": 0, "delta": {"content": "partial"}}]})


def run_turn(agent: Agent, bound: float = 60.0) -> TurnEnded:
    """The turn's end, which must come within `bound` seconds (a generous bound against a
    hang, not a measure of speed)."""
    ended: list[TurnEnded] = []
    thread = threading.Thread(target=lambda: ended.append(agent.run_turn("go")), daemon=True)
    thread.start()
    thread.join(bound)
    if thread.is_alive():
        agent.signals.cancel.set()  # so the test run goes on; the test fails below
        thread.join(10)
    assert ended, f"the turn did not end within {bound:g}s"
    return ended[0]


@pytest.fixture
def hostile() -> Iterator[Any]:
    servers: list[HostileServer] = []

    def start(*answers: Answer) -> HostileServer:
        servers.append(HostileServer(*answers))
        return servers[-1]

    yield start
    for server in servers:
        server.stop()


def ends_with_one_line(agent: Agent, events: Recorder, ended: TurnEnded) -> str:
    """The fault's line, once the checks every fault shares passed: one line, saved in the
    session's errors, the history valid, and a next turn that works."""
    assert ended.reason == "error", ended
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert len(errors) == 1, errors
    line = errors[0]
    assert "\n" not in line and "Traceback" not in line and len(line) < 400, line
    assert read_session_document(agent.session_path)["errors"][-1]["message"] == line
    assert_valid_history(agent.messages)
    assert run_turn(agent).reason == "answered"
    assert agent.messages[-1]["content"] == RECOVERED
    assert_valid_history(agent.messages)
    return line


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ("200 OK", "sent an empty answer (HTTP 200, no body) — try again"),
        ("404 Not Found", "has no /chat/completions (HTTP 404: empty body) — the base URL"),
    ],
)
@pytest.mark.parametrize("framing", ["length 0", "closed"])
def test_an_empty_body_is_said_at_once(
    status: str, expected: str, framing: str, hostile: Any, make_agent: AgentFactory
) -> None:
    headers = [EVENT_STREAM, EMPTY] if framing == "length 0" else [EVENT_STREAM]
    server = hostile(head(status, *headers))
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)

    line = ends_with_one_line(agent, events, run_turn(agent))

    assert line.startswith(f"the model server at {server.base_url} "), line
    assert expected in line
    assert len(server.requests) == 2  # the faulty one, not retried, and the next turn's


@pytest.mark.parametrize("status", ["500 Internal Server Error", "502 Bad Gateway"])
def test_an_empty_5xx_is_retried_then_said(
    status: str, hostile: Any, make_agent: AgentFactory
) -> None:
    server = hostile(*[head(status, EMPTY)] * 4)
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)

    line = ends_with_one_line(agent, events, run_turn(agent))

    code = status.split()[0]
    assert line == f"the model server failed (HTTP {code}: empty body) — gave up after 3 retries"
    assert len(server.requests) == 5
    retries = [n.text for n in events.of(Notice) if n.level == "warning"]
    assert len(retries) == 3 and all("retrying in" in text for text in retries)


@pytest.mark.parametrize("status", ["301 Moved Permanently", "302 Found", "307 Temporary Redirect"])
@pytest.mark.parametrize("where", ["elsewhere on the same host", "the same address: a loop"])
def test_a_redirect_is_refused_with_a_line_naming_where_it_leads(
    status: str, where: str, hostile: Any, make_agent: AgentFactory
) -> None:
    server = HostileServer()
    target = "/v2/chat/completions" if where.startswith("elsewhere") else "/v1/chat/completions"
    location = f"http://127.0.0.1:{server.port}{target}"
    server.answers = [head(status, f"Location: {location}", EMPTY)]
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)
    try:
        line = ends_with_one_line(agent, events, run_turn(agent))
    finally:
        server.stop()

    code = status.split()[0]
    assert line == (
        f"the model server at {server.base_url} redirects to {location} (HTTP {code}) — set "
        "that address with --base-url, OPENAI_BASE_URL or baseURL in .mm.yaml"
    )
    assert server.requests == ["POST /v1/chat/completions HTTP/1.1"] * 2  # never followed


def test_a_server_sending_only_keep_alive_comments_is_cut_after_twice_the_timeout(
    hostile: Any, make_agent: AgentFactory
) -> None:
    server = hostile(forever(head("200 OK", EVENT_STREAM, CHUNKED), b": ping\n\n", 0.05))
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)

    line = ends_with_one_line(agent, events, run_turn(agent))

    assert line == (
        f"the model server at {server.base_url} sent no answer for 1s, only keep-alive "
        "comments — stopped; try again; if it goes on, restart the server or look at its log"
    )


def test_comments_after_some_of_the_answer_are_cut_the_same(
    hostile: Any, make_agent: AgentFactory
) -> None:
    def write(connection: Any) -> None:
        connection.sendall(head("200 OK", EVENT_STREAM, CHUNKED) + chunk(CHUNK))
        forever(b"", b": ping\n\n", 0.05)(connection)

    server = hostile(write)
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)

    line = ends_with_one_line(agent, events, run_turn(agent))

    assert "sent no answer for 1s, only keep-alive comments" in line
    assert "partial" in [delta.text for delta in events.of(TextDelta)]  # it was shown


def measured(agent: Agent) -> tuple[TurnEnded, int]:
    """The turn's end and the most memory Python held while it ran (bytes)."""
    tracemalloc.start()
    try:
        ended = run_turn(agent)
        return ended, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    ("first", "rest"),
    [
        (b"data: ", b"a" * (1 << 20)),
        (b"", b"\n" * (1 << 20)),
        (b"", b": ping\n" * (1 << 17)),
    ],
    ids=["a line that never ends", "blank lines", "comments"],
)
def test_a_body_without_an_event_is_cut_at_4_mb(
    first: bytes, rest: bytes, hostile: Any, make_agent: AgentFactory
) -> None:
    def write(connection: Any) -> None:
        connection.sendall(head("200 OK", EVENT_STREAM, CHUNKED) + (chunk(first) if first else b""))
        for _ in range(64):  # 64 MB at most, far past the bound
            connection.sendall(chunk(rest))

    server = hostile(write)
    agent, events = make_agent(base_url=server.base_url, request_timeout=10)

    ended, peak = measured(agent)
    line = ends_with_one_line(agent, events, ended)

    assert line == (
        f"the model server at {server.base_url} sent 4 MB without a complete event (comments, "
        "blank lines, or a line that never ends) — stopped; try again; if it goes on, restart "
        "the server or look at its log"
    )
    assert peak < 32 << 20, f"{peak >> 20} MB held"


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (b"data: ", "sent 4 MB without a complete event"),
        (b"", "did not answer with an event stream (text/event-stream: 'aaaaaaaa"),
    ],
    ids=["an endless line", "no event stream at all"],
)
def test_a_gzip_bomb_is_inflated_a_little_at_a_time_and_cut(
    prefix: bytes, expected: str, hostile: Any, make_agent: AgentFactory
) -> None:
    """A body asked for uncompressed comes gzipped anyway, inflating to 256 MB (266 KB on
    the wire); it is inflated 64 KB at a time and cut at the first bound it meets."""
    bomb = gzip_bomb(prefix, 256)
    encoding = "Content-Encoding: gzip"
    server = hostile(head("200 OK", EVENT_STREAM, encoding, CHUNKED) + chunk(bomb) + chunk(b""))
    agent, events = make_agent(base_url=server.base_url, request_timeout=10)

    ended, peak = measured(agent)
    line = ends_with_one_line(agent, events, ended)

    assert expected in line, line
    assert peak < 32 << 20, f"{peak >> 20} MB held"


@pytest.mark.parametrize(
    ("content_type", "body", "shown"),
    [
        ("text/html; charset=utf-8", HTML, "text/html: '<!DOCTYPE html>'"),
        (
            "application/json",
            b'{"id": "x", "choices": [{"message": {"content": "hi"}}]}',
            'application/json: \'{"id": "x", "choices": [{"message": {"content": "hi"}}]}\'',
        ),
    ],
    ids=["an HTML page", "a whole JSON answer"],
)
def test_a_body_that_is_no_event_stream_is_said_with_what_it_was(
    content_type: str, body: bytes, shown: str, hostile: Any, make_agent: AgentFactory
) -> None:
    server = hostile(
        head("200 OK", f"Content-Type: {content_type}", f"Content-Length: {len(body)}") + body
    )
    agent, events = make_agent(base_url=server.base_url, request_timeout=TIMEOUT)

    line = ends_with_one_line(agent, events, run_turn(agent))

    assert line == (
        f"the model server at {server.base_url} did not answer with an event stream ({shown}) "
        "— is the base URL right? it usually ends in /v1"
    )


def test_an_error_answer_whose_body_never_ends_is_read_only_in_part(
    hostile: Any, make_agent: AgentFactory
) -> None:
    """A 500 streaming an endless body: the SDK reads an error body whole to describe it;
    here it is read 64 KB at most, retried as any 500, and said in one line."""
    endless = forever(head("500 Internal Server Error", "Content-Type: text/plain", CHUNKED),
                      b"overloaded " * 6000, 0.0)  # fmt: skip
    server = hostile(*[endless] * 4)
    agent, events = make_agent(base_url=server.base_url, request_timeout=10)

    ended, peak = measured(agent)
    line = ends_with_one_line(agent, events, ended)

    assert line.startswith("the model server failed (HTTP 500: overloaded overloaded"), line
    assert line.endswith("— gave up after 3 retries")
    assert peak < 32 << 20, f"{peak >> 20} MB held"
