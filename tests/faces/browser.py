"""A real headless Chromium driven over the DevTools protocol (aiohttp's websocket client):
open a page, type, read what the page's websocket received, take a screenshot."""

from __future__ import annotations

import asyncio
import base64
import codecs
import itertools
import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.waiting import await_until

# The flags this machine needs: no sandbox (root), no GPU, nothing fetched in the background.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,800",
    "--remote-debugging-port=0",
]
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


class Page:
    """One tab: DevTools commands, and the terminal text its websocket received so far."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.terminal_bytes = 0
        self._text: list[str] = []
        self._reader = asyncio.get_running_loop().create_task(self._read())

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        number = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[number] = future
        await self.ws.send_str(json.dumps({"id": number, "method": method, "params": params}))
        reply = await asyncio.wait_for(future, 30)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    async def evaluate(self, expression: str) -> Any:
        result = await self.send("Runtime.evaluate", expression=expression, returnByValue=True)
        return result["result"].get("value")

    def text(self) -> str:
        """What the terminal was sent, escape sequences removed (lines run together)."""
        return _ANSI.sub("", "".join(self._text))

    async def wait_for_text(self, needle: str, timeout: float = 60) -> None:
        shows = lambda text: needle in text  # noqa: E731
        await await_until(
            self.text, f"{needle!r} shown", until=shows, timeout=timeout, interval=0.2
        )

    async def type(self, text: str) -> None:
        """Keys as a person types them into the terminal: the text, then Enter."""
        await self.evaluate("document.querySelector('.xterm-helper-textarea').focus()")
        await self.send("Input.insertText", text=text)
        for kind in ("keyDown", "keyUp"):
            await self.send("Input.dispatchKeyEvent", type=kind, key="Enter", code="Enter",
                            windowsVirtualKeyCode=13, text="\r" if kind == "keyDown" else "")  # fmt: skip

    async def screenshot(self, path: Path) -> Path:
        shot = await self.send("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
        return path

    async def _read(self) -> None:
        async for message in self.ws:
            data = json.loads(message.data)
            if "id" in data:
                future = self._pending.pop(data["id"], None)
                if future is not None and not future.done():
                    future.set_result(data)
            elif data.get("method") == "Network.webSocketFrameReceived":
                response = data["params"]["response"]
                if response.get("opcode") == 2:  # binary: the terminal's bytes
                    raw = base64.b64decode(response["payloadData"])
                    self.terminal_bytes += len(raw)
                    self._text.append(self._decoder.decode(raw))


@asynccontextmanager
async def chromium_page(user_data_dir: Path) -> AsyncIterator[Page]:
    """A fresh headless Chromium (its own profile) and its first tab, closed afterwards."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    if binary is None:
        pytest.fail("Chromium is needed for this test (Debian: apt-get install chromium)")
    user_data_dir.mkdir(parents=True, exist_ok=True)
    log_path = user_data_dir.parent / "chromium.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [binary, *CHROMIUM_FLAGS, f"--user-data-dir={user_data_dir}", "about:blank"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        port_file = user_data_dir / "DevToolsActivePort"

        def port_and_log() -> tuple[str, str]:
            """The DevTools port once written, and the end of Chromium's log so far."""
            tail = log_path.read_text(errors="replace")[-2000:]
            assert process.poll() is None, f"Chromium exited at start: {tail}"
            return (port_file.read_text().strip() if port_file.exists() else ""), tail

        written, _ = await await_until(
            port_and_log,
            "a DevTools port (and Chromium's log)",
            until=lambda seen: seen[0],
            timeout=90,  # a loaded 2-core machine starts Chromium slowly
            interval=0.1,
        )
        port = written.split()[0]
        async with aiohttp.ClientSession() as http:
            async with http.get(f"http://127.0.0.1:{port}/json/list") as response:
                targets = await response.json()
            [tab] = [t for t in targets if t["type"] == "page"]
            async with http.ws_connect(tab["webSocketDebuggerUrl"], max_msg_size=0) as ws:
                page = Page(ws)
                await page.send("Page.enable")
                await page.send("Network.enable")
                await page.send("Runtime.enable")
                yield page
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
