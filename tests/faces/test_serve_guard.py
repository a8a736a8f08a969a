"""`mm-tui serve` lets in only the person who started it, never another web page.

Listening on 127.0.0.1 does not keep the web out: a page the person visits can open a
websocket to it (browsers apply no same-origin policy to websockets), or reach it under its
own name by DNS rebinding. Here real HTTP and websocket requests go to a real `mm-tui serve
--demo`, as such a page would send them: a foreign Origin, a rebound Host, no token or a wrong
one are refused with 403; the printed URL, its token and the cookie its page sets drive the
window.
"""

from __future__ import annotations

import asyncio
import http.client
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest

from tests.faces.test_serve import mm_serve


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `mm-tui serve --demo` for the module's tests: its printed URL."""
    with mm_serve(tmp_path_factory.mktemp("serve"), "--demo") as url:
        yield url


def parts(url: str) -> tuple[int, str]:
    split = urlsplit(url)
    assert split.port is not None
    return split.port, parse_qs(split.query)["token"][0]


def get(port: int, path: str, host: str | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Host": host} if host else {}
    connection.request("GET", path, headers=headers)
    return connection.getresponse()


def websocket(port: int, headers: dict[str, str], query: str = "") -> tuple[int, str]:
    """Open `/ws` with these headers: (101 and what the window sent first) or (the refusal's
    status, "")."""

    async def attempt() -> tuple[int, str]:
        async with aiohttp.ClientSession() as session:
            try:
                socket = await session.ws_connect(
                    f"http://127.0.0.1:{port}/ws?width=80&height=24{query}", headers=headers
                )
            except aiohttp.WSServerHandshakeError as refused:
                return refused.status, ""
            async with socket:
                await socket.send_json(["ping", "42"])
                kinds: list[str] = []
                async for message in socket:  # the window's bytes, and the pong
                    if message.type == aiohttp.WSMsgType.BINARY:
                        kinds.append("window bytes")
                    elif message.type == aiohttp.WSMsgType.TEXT and '"pong"' in message.data:
                        kinds.append("pong")
                    if {"window bytes", "pong"} <= set(kinds):
                        break
                return 101, " ".join(sorted(set(kinds)))

    return asyncio.run(asyncio.wait_for(attempt(), 120))


def test_the_printed_url_carries_a_token_and_the_page_opens_only_with_it(served: str) -> None:
    port, token = parts(served)
    assert served == f"http://127.0.0.1:{port}/?token={token}" and len(token) >= 40
    assert get(port, "/").status == 403
    assert get(port, "/?token=wrong" + token[6:]).status == 403
    opened = get(port, f"/?token={token}")
    assert opened.status == 200
    cookie = opened.getheader("Set-Cookie") or ""
    assert f"mm-tui-token-{port}={token}" in cookie
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_a_rebound_host_name_is_refused_even_with_the_token(served: str) -> None:
    port, token = parts(served)
    assert get(port, f"/?token={token}", host=f"evil.example:{port}").status == 403
    assert get(port, f"/?token={token}", host="127.0.0.1:1").status == 403
    cookie = {"Cookie": f"mm-tui-token-{port}={token}"}
    assert websocket(port, {**cookie, "Host": f"evil.example:{port}"})[0] == 403


def test_a_websocket_from_another_page_is_refused(served: str) -> None:
    port, token = parts(served)
    cookie = {"Cookie": f"mm-tui-token-{port}={token}"}
    for origin in ("http://evil.example", f"http://evil.example:{port}", "null"):
        assert websocket(port, {**cookie, "Origin": origin})[0] == 403, origin
    own = {"Origin": f"http://127.0.0.1:{port}"}
    assert websocket(port, own)[0] == 403  # the right origin without the token
    assert websocket(port, {**own, "Cookie": f"mm-tui-token-{port}=wrong"})[0] == 403


def test_the_right_origin_with_the_token_drives_the_window(served: str) -> None:
    port, token = parts(served)
    own = {"Origin": f"http://127.0.0.1:{port}", "Cookie": f"mm-tui-token-{port}={token}"}
    assert websocket(port, own) == (101, "pong window bytes")
    by_query = websocket(port, {"Origin": f"http://localhost:{port}"}, f"&token={token}")
    assert by_query == (101, "pong window bytes")


def test_localhost_sends_the_browser_to_the_printed_address(served: str, tmp_path: Path) -> None:
    port, token = parts(served)
    moved = get(port, f"/?token={token}", host=f"localhost:{port}")
    assert moved.status == 307
    assert moved.getheader("Location") == served
