"""The window's cost, each figure beside bare Textual or a bare client, same run.

- First frame: a fresh interpreter, from spawn to the first rendered frame (headless), mm-tui's
  window (its real Agent built after the first frame) against bare Textual with the same kinds
  of widget (`window_harness.BareWindow`). Aim: at most 1.5x.
- Streaming and first token: `bench_window_stream` (CPU per 1,000 tokens at 50 and 200
  tokens/s against the raw SSE read; first token against `-p`).
- Length: `bench_window_rows` (realistic transcripts at 100 to 5,000 rows, replay, a huge
  answer).

Run `python -m bench.bench_window`; `run()` returns the rows. Every child is a fresh
interpreter, so one figure's memory or warm caches never help another.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import bench_window_rows, bench_window_stream
from bench.measure import print_rows, row
from bench.window_harness import SIZE, bare_window_class, frame_timed

FIRST_FRAME_RUNS = 5


def _child_first_frame(kind: str, spawned: float) -> None:
    """Runs in the child: start the app, print seconds from spawn to the first frame."""
    if kind == "bare":
        app = frame_timed(bare_window_class())()
    else:
        from mm_tui.agent.config import Config
        from mm_tui.app import MMApp
        from mm_tui.window.ports import live_factory

        config = Config(base_url="http://127.0.0.1:9/v1", model="bench-model")
        cwd = Path.cwd()
        factory = live_factory(config, cwd)
        app = frame_timed(MMApp)(config, cwd, agent_factory=factory, history_path=None)

    async def first_frame() -> None:
        async with app.run_test(size=SIZE) as pilot:
            while not app.frames:
                await asyncio.sleep(0.001)
            print(json.dumps(time.time() - spawned + (app.frames[0] - time.perf_counter())))
            await pilot.exit(None)

    asyncio.run(first_frame())
    os._exit(0)  # do not wait for the Agent's worker thread


def bench_first_frame() -> dict[str, Any]:
    def spawn(kind: str) -> float:
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_window", "first-frame", kind, repr(time.time())],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(output.stdout.strip().splitlines()[-1]) * 1000

    bare, window = [], []
    for _ in range(FIRST_FRAME_RUNS):  # interleaved, so both see the same machine load
        bare.append(spawn("bare"))
        window.append(spawn("window"))
    return row(
        "first frame from spawn: window vs bare Textual, same widgets",
        statistics.median(window),
        statistics.median(bare),
        max_ratio=1.5,
    )


def run() -> list[dict[str, Any]]:
    """Every window benchmark, as rows {name, value, baseline, ratio, unit} (+ aim)."""
    return [bench_first_frame(), *bench_window_stream.run(), *bench_window_rows.run()]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "first-frame":
        _child_first_frame(sys.argv[2], float(sys.argv[3]))
    else:
        print_rows(run())
