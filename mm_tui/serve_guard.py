"""`mm-tui serve`'s door: only the person who started it drives the window, never a web page.

Listening on 127.0.0.1 keeps the network out, not the web: any page the person visits can
open a websocket to `ws://127.0.0.1:8000/ws` (browsers do not apply the same-origin policy to
websockets), and a DNS-rebinding page reaches it under its own host name. The window runs
commands, so each request is checked as Jupyter's server checks its own:

- the `Host` header names this server (127.0.0.1, localhost or ::1, on its port): a rebound
  name (`evil.example:8000`) is refused;
- a websocket's `Origin`, when a browser sends one, is this server too (`http://evil.example`
  is refused; a client that sends none is not a web page);
- a token made at each start (`secrets.token_urlsafe`) comes with the request: in the URL
  printed at start (`/?token=…`), then in an HttpOnly, SameSite=Strict cookie the page sets,
  which the page's websocket carries. It is compared in constant time (`hmac.compare_digest`).

textual-serve has no hook for this; its public handlers are wrapped here (`Server` subclass).
"""

from __future__ import annotations

import hmac
import logging
import secrets
import sys
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web
from textual_serve.server import Server

from mm_tui.support.terminal_text import quoted

log = logging.getLogger(__name__)

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
TOKEN_PARAMETER = "token"
SERVING = "mm-tui serve: open {url} (the token in it lets your browser in; Ctrl+C stops)"
REFUSED_HOST = "mm-tui serve: refused: this server is not {host}"
REFUSED_ORIGIN = "mm-tui serve: refused: a page from {origin} may not drive the window"
REFUSED_TOKEN = "mm-tui serve: refused: open the URL with its token, as printed at start"


class GuardedServer(Server):
    """textual-serve's server, answering only requests that carry its host, origin and token."""

    def __init__(self, command: str, *, host: str, port: int, title: str) -> None:
        super().__init__(command, host=host, port=port, title=title)
        self.token = secrets.token_urlsafe(32)
        self.cookie_name = f"mm-tui-token-{port}"  # cookies ignore ports: one per server
        self.allowed_hosts = LOOPBACK_NAMES | {host}

    @property
    def url(self) -> str:
        """The page's address with its token: the one line to open."""
        return f"{self.public_url}/?{TOKEN_PARAMETER}={self.token}"

    async def on_startup(self, app: web.Application) -> None:
        print(SERVING.format(url=self.url), flush=True)

    async def handle_index(self, request: web.Request) -> Any:
        self._check_host(request)
        given = request.query.get(TOKEN_PARAMETER)
        self._check_token(request)
        if _hostname(request.host) != self.host:  # `localhost`: one origin, the printed one
            raise web.HTTPTemporaryRedirect(self.url)
        response = await super().handle_index(request)
        if given is not None:
            response.set_cookie(
                self.cookie_name, self.token, httponly=True, samesite="Strict", path="/"
            )
        return response

    async def handle_websocket(self, request: web.Request) -> Any:
        self._check_host(request)
        self._check_origin(request)
        self._check_token(request)
        return await super().handle_websocket(request)

    async def handle_download(self, request: web.Request) -> web.StreamResponse:
        self._check_host(request)
        self._check_token(request)
        return await super().handle_download(request)

    def _check_host(self, request: web.Request) -> None:
        if not self._is_this_server(request.host):
            _refuse(REFUSED_HOST.format(host=quoted(request.host)))

    def _check_origin(self, request: web.Request) -> None:
        origin = request.headers.get("Origin")
        if origin is None:  # not a browser: the token alone decides
            return
        parts = urlsplit(origin)
        if parts.scheme != "http" or not self._is_this_server(parts.netloc):
            _refuse(REFUSED_ORIGIN.format(origin=quoted(origin)))

    def _check_token(self, request: web.Request) -> None:
        given = request.query.get(TOKEN_PARAMETER) or request.cookies.get(self.cookie_name, "")
        if not hmac.compare_digest(given.encode(), self.token.encode()):
            _refuse(REFUSED_TOKEN)

    def _is_this_server(self, netloc: str) -> bool:
        """Whether `host[:port]` names this server: a loopback name and its own port."""
        try:
            parts = urlsplit(f"//{netloc}")
            port = parts.port if parts.port is not None else 80
        except ValueError:
            return False
        return parts.hostname in self.allowed_hosts and port == self.port


def _hostname(netloc: str) -> str | None:
    try:
        return urlsplit(f"//{netloc}").hostname
    except ValueError:
        return None


def _refuse(reason: str) -> None:
    log.debug("%s", reason)
    print(reason, file=sys.stderr, flush=True)
    raise web.HTTPForbidden(text=reason)
