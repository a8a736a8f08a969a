"""The window at idle: the CPU it uses, and the frames it draws, while nothing changes.

The window (its real Agent, connected to the scripted server, its clock and cursor on) waits
for the core to be ready, then two seconds more, then sits `IDLE_SECONDS` with nobody typing;
the floor is bare Textual with the window's kinds of widget and its cursor still (nothing
ticks), for the same span. Both as the process's CPU seconds (every thread), each in a fresh
interpreter (`python -m bench.bench_window_idle <child> …`), headless (Textual's pilot).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench.bench_window_stream import _window_app, scripted_server
from bench.measure import print_rows, row
from bench.window_harness import SIZE, bare_window_class, frame_timed, until

IDLE_SECONDS = 60.0


def child_window_idle(base_url: str, seconds: float) -> dict[str, float]:
    app = _window_app(base_url)
    result: dict[str, float] = {}

    async def measure() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.turns.port is not None)
            await pilot.pause(2.0)
            cpu, frames = time.process_time(), len(app.frames)
            await asyncio.sleep(seconds)
            result["cpu"] = time.process_time() - cpu
            result["frames"] = len(app.frames) - frames
            await pilot.exit(None)

    asyncio.run(measure())
    app.turns.close()
    return result


def child_bare_idle(seconds: float) -> dict[str, float]:
    app = frame_timed(bare_window_class())()
    result: dict[str, float] = {}

    async def measure() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause(2.0)
            cpu, frames = time.process_time(), len(app.frames)
            await asyncio.sleep(seconds)
            result["cpu"] = time.process_time() - cpu
            result["frames"] = len(app.frames) - frames
            await pilot.exit(None)

    asyncio.run(measure())
    return result


def run(seconds: float = IDLE_SECONDS) -> list[dict[str, Any]]:
    with scripted_server([]) as base_url:
        window = _run_child("window-idle", base_url, str(seconds))
    bare = _run_child("bare-idle", str(seconds))
    per_minute = 60.0 / seconds
    return [
        row(
            f"idle {seconds:g} s: CPU s a minute, window vs bare Textual (nothing ticking)",
            window["cpu"] * per_minute,
            bare["cpu"] * per_minute,
            unit="s",
        ),
        row(
            f"idle {seconds:g} s: frames drawn, window vs bare Textual",
            window["frames"],
            bare["frames"],
            unit="frames",
        ),
    ]


def _run_child(*args: str) -> Any:
    import subprocess
    import tempfile

    root = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_DATA_HOME": home, "XDG_STATE_HOME": home, "MM_DEBUG": "",
               "PYTHONPATH": str(root)}  # fmt: skip
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_window_idle", *args],
            capture_output=True, text=True, env=env, cwd=home,
        )  # fmt: skip
    lines = output.stdout.strip().splitlines()
    if output.returncode or not lines:
        print(f"bench child {args[0]} failed: {output.stderr.strip()[-3000:]}", file=sys.stderr)
        return {"cpu": float("nan"), "frames": float("nan")}
    print(f"bench child {args[0]}: {lines[-1]}", file=sys.stderr, flush=True)
    return json.loads(lines[-1])


if __name__ == "__main__":
    if sys.argv[1:2] == ["window-idle"]:
        print(json.dumps(child_window_idle(sys.argv[2], float(sys.argv[3]))), flush=True)
        os._exit(0)  # do not wait for the Agent's worker threads
    if sys.argv[1:2] == ["bare-idle"]:
        print(json.dumps(child_bare_idle(float(sys.argv[2]))), flush=True)
        os._exit(0)
    print_rows(run(float(sys.argv[1]) if sys.argv[1:] else IDLE_SECONDS))
