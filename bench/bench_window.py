"""The window's cost, as ratios against a bare Textual app started the same way in the same run.

- First frame: a fresh interpreter, from spawn to the first rendered frame (headless), mm-tui's
  window (with its real Agent being built) against a bare App with a Static and a Footer.
  Aim: at most 1.5x.
- Streaming: a 4,000-token Markdown answer (prose, lists, code) streamed as fast as the scripted server (its own
  process) can send it; from submitting the message to the frame showing the whole answer,
  against the bare `openai` client reading the same stream. Aim: at most 1.2x.
- 500 finished tool rows: key press to screen update (fold a row; type in the prompt) against
  the same key in the bare app, and the process's memory. Aim: under 50 ms, under 250 MB.

Frames are timed by hooking `App._display`, which Textual calls with each rendered update
(headless too). Run `python -m bench.bench_window`; `run()` returns the rows.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.measure import print_rows, row

FIRST_FRAME_RUNS = 5
STREAM_RUNS = 3
KEY_PRESSES = 15
ROWS = 500
ANSWER_TOKENS = 4000
SIZE = (120, 40)


def _frame_timed(app_class: type) -> type:
    """A subclass that records each rendered frame: its time, and what `probe()` said then."""

    class FrameTimed(app_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.frames: list[float] = []
            self.probed: list[tuple[float, bool]] = []
            self.probe: Callable[[], bool] | None = None

        def _display(self, screen: Any, renderable: Any) -> None:
            if renderable is not None:
                now = time.perf_counter()
                self.frames.append(now)
                if self.probe is not None:
                    self.probed.append((now, self.probe()))
            super()._display(screen, renderable)

    return FrameTimed


def _bare_app_class() -> type:
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.widgets import Footer, Static

    class BareApp(App[None]):
        """The baseline: a Static that Enter toggles, and a Footer."""

        BINDINGS = [Binding("enter", "toggle", "Toggle")]

        def compose(self) -> ComposeResult:
            yield Static("hello", id="text")
            yield Footer()

        shown = "hello"

        def action_toggle(self) -> None:
            self.shown = "world" if self.shown == "hello" else "hello"
            self.query_one("#text", Static).update(self.shown)

    return BareApp


# -- first frame (in a child interpreter) -----------------------------------------------------


def _child_first_frame(kind: str, spawned: float) -> None:
    """Runs in the child: start the app, print seconds from spawn to the first frame."""
    if kind == "bare":
        app = _frame_timed(_bare_app_class())()
    else:
        from mm_tui.agent.config import Config
        from mm_tui.app import MMApp
        from mm_tui.window.ports import live_factory

        config = Config(base_url="http://127.0.0.1:9/v1", model="bench-model")
        cwd = Path.cwd()
        factory = live_factory(config, cwd)
        app = _frame_timed(MMApp)(config, cwd, agent_factory=factory, history_path=None)

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
        "first frame from spawn: window vs bare Textual app",
        statistics.median(window),
        statistics.median(bare),
        max_ratio=1.5,
    )


# -- streaming ----------------------------------------------------------------------------------


def answer_markdown() -> str:
    """About 4,000 tokens (~4 characters each) of a coding answer: prose, lists, code."""
    section = (
        "## Step {n}: what changes\n\n"
        "The function `step_{n}` reads the configuration once, checks every value it needs and "
        "returns early with a clear message when one is missing, so the caller never sees a "
        "half-built object. This keeps the **error path** short and easy to test.\n\n"
        "It also logs what it decided, which makes the next failure much easier to explain "
        "to whoever reads the log first, usually at the worst possible moment.\n\n"
        "- read the file once\n- validate each key\n- return a typed object\n\n"
        "```python\n"
        "def step_{n}(path: Path) -> Settings:\n"
        "    raw = yaml.safe_load(path.read_text())\n"
        "    missing = [key for key in REQUIRED if key not in raw]\n"
        "    if missing:\n"
        "        raise ConfigError(f\"missing: {{', '.join(missing)}}\")\n"
        "    return Settings(**raw)\n"
        "```\n\n"
    )
    text, n = "", 0
    while len(text) < ANSWER_TOKENS * 4:
        n += 1
        text += section.format(n=n)
    return text[: ANSWER_TOKENS * 4]


def _raw_stream_seconds(base_url: str) -> float:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    started = time.perf_counter()
    stream = client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "go"}], stream=True
    )
    for _ in stream:
        pass
    return time.perf_counter() - started


async def _window_stream_seconds(base_url: str, folder: Path) -> float:
    from mm_tui.agent.config import Config
    from mm_tui.app import MMApp
    from mm_tui.window.ports import live_factory

    config = Config(base_url=base_url, model="bench-model", lsp_servers=(), permissions="allow")
    factory = live_factory(config, folder)
    app = _frame_timed(MMApp)(config, folder, agent_factory=factory, history_path=None, still=True)
    async with app.run_test(size=SIZE) as pilot:
        while app.turns.port is None:
            await asyncio.sleep(0.005)
        started = time.perf_counter()
        app.turns.submit("go")
        while app.turns.running:
            await asyncio.sleep(0.001)
        ended = time.perf_counter()
        while not app.frames or app.frames[-1] < ended:
            await asyncio.sleep(0.001)
        finished = app.frames[-1]
        await pilot.exit(None)
    app.turns.close()
    return finished - started


def bench_stream() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        os.environ["XDG_DATA_HOME"] = str(folder / "data")
        reply = {"text": answer_markdown(), "chunk_size": 4}
        script = folder / "script.json"
        script.write_text(json.dumps([reply] * (2 * STREAM_RUNS + 2)))
        server = subprocess.Popen(
            [sys.executable, "-m", "mm_tui.scripted_server", str(script)],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            _raw_stream_seconds(base_url)  # warm up both paths once
            asyncio.run(_window_stream_seconds(base_url, folder))
            raw, window = [], []
            for _ in range(STREAM_RUNS):
                raw.append(_raw_stream_seconds(base_url) * 1000)
                window.append(asyncio.run(_window_stream_seconds(base_url, folder)) * 1000)
        finally:
            server.terminate()
            server.wait()
    return row(
        "4,000-token answer, submit to last frame: window vs bare openai client",
        statistics.median(window),
        statistics.median(raw),
        max_ratio=1.2,
    )


# -- 500 rows (in a child interpreter, for a clean memory figure) ------------------------------


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def _until(condition: Callable[[], bool], limit: float = 20.0) -> None:
    """Yield to the app until `condition` holds; a bench that waits forever is a bug."""
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise RuntimeError("the app never reached the state the bench waits for")
        await asyncio.sleep(0)


async def _key_to_frame_ms(app: Any, pilot: Any, key: str, shown: Callable[[int], bool]) -> float:
    """Milliseconds from a key press to the first frame drawn with `shown(press)` true."""
    await pilot.pause()
    times = []
    for press in range(KEY_PRESSES):
        app.probed.clear()
        app.probe = lambda: shown(press)  # noqa: B023 - reset every press
        started = time.perf_counter()
        await app._press_keys([key])
        await _until(lambda: any(state for _, state in app.probed))
        drawn = next(moment for moment, state in app.probed if state)
        times.append((drawn - started) * 1000)
        app.probe = None
        await pilot.pause()
    return statistics.median(times)


def _child_rows(kind: str) -> None:
    """Runs in the child: print key latencies and memory as JSON."""
    result: dict[str, float] = {}

    async def measure() -> None:
        if kind == "bare":
            app = _frame_timed(_bare_app_class())()
            async with app.run_test(size=SIZE) as pilot:

                def toggled(press: int) -> bool:
                    return app.shown == ("world" if press % 2 == 0 else "hello")

                result["fold"] = await _key_to_frame_ms(app, pilot, "enter", toggled)
                result["type"] = result["fold"]
                result["rss"] = _rss_mb()
                await pilot.exit(None)
            return
        from mm_tui.agent.config import Config
        from mm_tui.agent.events import ToolFinished, ToolStarted, ToolStatus, TurnStarted
        from mm_tui.app import MMApp

        app = _frame_timed(MMApp)(Config(model="bench-model"), Path("/bench"), still=True,
                                   history_path=None)  # fmt: skip
        async with app.run_test(size=SIZE) as pilot:
            app.bridge(TurnStarted("many rows"))
            output = "".join(f"output line {n}\n" for n in range(20))
            for n in range(ROWS):
                call = f"call{n}"
                app.bridge(ToolStarted(call, "bash", {"command": f"echo {n}"}, f"bash echo {n}"))
                app.bridge(
                    ToolFinished(call, "bash", f"bash echo {n}", ToolStatus.DONE, 0.1, output)
                )
            while len(app.transcript.rows) < ROWS:
                await pilot.pause(0.05)
            await pilot.pause()
            last = list(app.transcript.rows.values())[-1]
            last.focus()

            def folded_as_asked(press: int) -> bool:
                unfolded = press % 2 == 0
                return last.expanded == unfolded and bool(last.children) == unfolded

            result["fold"] = await _key_to_frame_ms(app, pilot, "enter", folded_as_asked)
            prompt = app.query_one("#prompt")
            prompt.focus()

            def typed(press: int) -> bool:
                return prompt.text == "x" * (press + 1)

            result["type"] = await _key_to_frame_ms(app, pilot, "x", typed)
            result["rss"] = _rss_mb()
            await pilot.exit(None)

    asyncio.run(measure())
    print(json.dumps(result))
    os._exit(0)


def bench_rows() -> list[dict[str, Any]]:
    def child(kind: str) -> dict[str, float]:
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_window", "rows", kind],
            capture_output=True,
            text=True,
            check=True,
        )
        return json.loads(output.stdout.strip().splitlines()[-1])

    bare, window = child("bare"), child("window")
    return [
        row(f"{ROWS} rows: Enter folds a row, key to frame", window["fold"], bare["fold"],
            max_value=50),
        row(f"{ROWS} rows: a key typed in the prompt, key to frame", window["type"],
            bare["type"], max_value=50),
        row(f"{ROWS} rows: process memory (RSS)", window["rss"], bare["rss"], unit="MB",
            max_value=250),
    ]  # fmt: skip


def run() -> list[dict[str, Any]]:
    """Every window benchmark, as rows {name, value, baseline, ratio, unit} (+ aim)."""
    return [bench_first_frame(), bench_stream(), *bench_rows()]


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "first-frame":
        _child_first_frame(sys.argv[2], float(sys.argv[3]))
    elif len(sys.argv) > 1 and sys.argv[1] == "rows":
        _child_rows(sys.argv[2])
    else:
        print_rows(run())
