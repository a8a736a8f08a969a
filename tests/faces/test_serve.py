"""`mm-tui serve`: the window in a real headless Chromium, through textual-serve on 127.0.0.1.

The page loads, a person types a request, the scripted turn's tool row and answer appear, and a
screenshot is taken (kept beside the test's files); `--demo` plays there too.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.browser import chromium_page
from tests.faces.helpers import clean_env
from tests.waiting import wait_until

SCREENSHOTS = os.environ.get("MM_SCREENSHOTS")  # a directory to keep the screenshots in


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def mm_serve(home: Path, *flags: str) -> Iterator[str]:
    """`mm-tui serve --port P FLAGS` until the test ends; yields the page's URL, its token
    included, as the serve line printed it."""
    port = free_port()
    log = (home / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "mm_tui.cli", "serve", "--port", str(port), *flags],
        cwd=home, env=clean_env(home, TERM="xterm-256color"),
        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip

    def printed_url() -> str | None:
        assert process.poll() is None, (home / "serve.log").read_text()
        found = re.search(r"open (http://\S+)", (home / "serve.log").read_text())
        return found.group(1) if found else None

    def answers(url: str) -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                assert response.status == 200
                return True
        except OSError:
            return False

    try:
        url = wait_until(printed_url, "mm-tui serve prints its URL", timeout=60, interval=0.2)
        wait_until(lambda: answers(url), "mm-tui serve answers", timeout=60, interval=0.2)
        yield url
        process.send_signal(signal.SIGTERM)  # Ctrl+C or SIGTERM stops it cleanly
        assert process.wait(20) == 0, (home / "serve.log").read_text()
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        log.close()


def keep(path: Path) -> None:
    if SCREENSHOTS:
        Path(SCREENSHOTS).mkdir(parents=True, exist_ok=True)
        (Path(SCREENSHOTS) / path.name).write_bytes(path.read_bytes())


@pytest.mark.timeout(300)  # a loaded machine starts Chromium and the window slowly
def test_a_turn_typed_in_the_browser_shows_its_row_and_answer(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo served-row"})]),
        Reply(text="The browser saw it."),
    )
    flags = ("--yolo", "--base-url", model_server.base_url, "--model", "m")

    async def scenario(url: str) -> Path:
        async with chromium_page(tmp_path / "chromium") as page:
            await page.send("Page.navigate", url=url)
            await page.wait_for_text("Ready")  # the window is up in the page
            await page.type("run the command")
            await page.wait_for_text("bash echo served-row")
            await page.wait_for_text("The browser saw it.")
            await asyncio.sleep(1)  # the fade-in and the last frame
            assert await page.evaluate("document.body.classList.contains('-first-byte')")
            return await page.screenshot(tmp_path / "serve-turn.png")

    with mm_serve(tmp_path, *flags) as url:
        shot = asyncio.run(asyncio.wait_for(scenario(url), 240))
    keep(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    assert model_server.requests[0]["messages"][-1]["content"].endswith("run the command")
    assert model_server.requests[1]["messages"][-1]["content"] == "served-row\n"


@pytest.mark.timeout(300)
def test_the_demo_plays_in_the_browser(tmp_path: Path) -> None:
    async def scenario(url: str) -> Path:
        async with chromium_page(tmp_path / "chromium") as page:
            await page.send("Page.navigate", url=url)
            await page.wait_for_text("Why does greet('') crash?")
            await page.wait_for_text("bash")
            await asyncio.sleep(2)
            return await page.screenshot(tmp_path / "serve-demo.png")

    with mm_serve(tmp_path, "--demo") as url:
        shot = asyncio.run(asyncio.wait_for(scenario(url), 240))
    keep(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000


def test_help_lists_the_commands_and_a_bad_config_stops_serve_before_it_serves(
    tmp_path: Path,
) -> None:
    from tests.faces.helpers import mm

    shown = mm("--help", cwd=tmp_path)
    for command in ("acp", "serve", "doctor"):
        assert f"    {command} " in shown.stdout
    (tmp_path / ".mm.yaml").write_text("maxOutput: many\n")
    result = mm("serve", "--port", str(free_port()), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("mm-tui: config error in ") and result.stdout == ""
