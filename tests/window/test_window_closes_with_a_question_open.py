"""A window that closes while a question waits, whatever closes it (an error, a test's end,
anything but Ctrl+Q), stops the turn: the core's thread no longer waits for an answer nobody
can give, and the process ends instead of hanging on it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from scripted_server import Reply, ToolCall

ROOT = Path(__file__).resolve().parents[2]

CLOSE_WHILE_ASKED = """
import asyncio, sys
from pathlib import Path
from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.widgets.permission import PermissionQuestion

base_url, project = sys.argv[1], Path(sys.argv[2])
config = Config(base_url=base_url, model="scripted-model", lsp_servers=(), permissions="ask")

async def main() -> None:
    app = MMApp(config, project, agent_factory=lambda sink: Agent(config, sink, project),
                history_path=None)
    async with app.run_test() as pilot:
        prompt = app.query_one("#prompt")
        prompt.focus()
        prompt.insert("make a file")
        await pilot.press("enter")
        for _ in range(1500):
            if app.query(PermissionQuestion):
                break
            await pilot.pause(0.02)
        print("asked", flush=True)
        app.exit()  # closed by something else than Ctrl+Q: the question is still open

asyncio.run(main())
print("ended", flush=True)
"""


def test_a_window_closed_with_a_question_open_ends_its_process(
    model_server: Any, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "touch made"})]))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_STATE_HOME": str(tmp_path / "state"),
           "XDG_DATA_HOME": str(tmp_path / "data"), "XDG_CONFIG_HOME": str(tmp_path / "config")}  # fmt: skip
    child = subprocess.Popen(
        [sys.executable, "-c", CLOSE_WHILE_ASKED, model_server.base_url, str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        out, err = child.communicate(timeout=60)  # a generous bound, not a timing
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        raise AssertionError(f"the process hung after the window closed: {out!r}") from None
    assert out.split() == ["asked", "ended"], err
    assert not (tmp_path / "made").exists()  # nobody said yes
