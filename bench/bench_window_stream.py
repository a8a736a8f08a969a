"""The window while the model streams: CPU per 1,000 tokens at a paced rate, and first token.

- CPU: the scripted server (its own process) sends a 1,000-token Markdown answer (prose,
  lists, code; 4 characters a chunk, ~1 token) at 50 and 200 tokens/s, and at wire speed. The
  floor is a bare client in its own interpreter reading the same stream raw (http.client, SSE
  lines, `json.loads`: the least any client does). The window (its real Agent, spinner and cursor on)
  is measured from submitting the message to the first frame showing the finished answer;
  both as the process's CPU seconds (every thread). Aim at 50 tokens/s: at most 2x the floor,
  both the medians of `ROUNDS` alternated runs (one run of the floor swings by a third).
  Frames drawn per second while streaming are reported beside it (aim: at most 20). At 50
  tokens/s it is measured again below 150 finished rows, all mounted (a long session's live
  window): what the transcript's length still costs a streaming answer.
- Floors: bare Textual with the window's screen (stream_floor.py) for the same 20 s, idle,
  with a one-cell spinner at 10 Hz, and with the spinner and a followed Line-API text gaining a
  line every 0.4 s: the least a Textual window costs while a model streams; and the least a
  line-gated window can come down to: nothing animated, a self-drawn tail repainted every 0.4 s.
- First token: from spawning the interpreter to the first token shown, `-p` (stdout) against
  the window (the message submitted at its first frame, as a person typing at once would).
  Aim: the window within 50 ms of `-p`.

Each figure runs in a fresh interpreter (`python -m bench.bench_window_stream <child> …`).
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
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.measure import print_rows, row
from bench.stream_floor import SECONDS, child_floor
from bench.window_harness import SIZE, frame_timed, until

TOKENS = 1000
RATES = (50, 200)
ROUNDS = 3  # at 50 tokens/s, the aim's rate: alternated runs of the bare read and the window
FIRST_TOKEN_RUNS = 5
FIRST_WORD = "Firstly"
ROWS_ABOVE = 150  # mounted rows above the answer: near the block window's most (LIVE_MOST)
FLOOR_MODES = {
    "idle": "idle",
    "spinner": "a one-cell spinner at 10 Hz",
    "lines": "the spinner and a followed Line-API text gaining a line every 0.4 s",
    "tail": "no spinner, the cursor still, a self-drawn tail of text gaining a line every 0.4 s",
}
ROOT = Path(__file__).resolve().parents[1]  # children run in a scratch folder, bench from here


def answer_markdown(tokens: int = TOKENS) -> str:
    """About `tokens` tokens (~4 characters each) of a coding answer: prose, lists, code."""
    section = (
        "## Step {n}: what changes\n\n"
        "The function `step_{n}` reads the configuration once, checks every value it needs and "
        "returns early with a clear message when one is missing, so the caller never sees a "
        "half-built object. This keeps the **error path** short and easy to test.\n\n"
        "- read the file once\n- validate each key\n- return a typed object\n\n"
        "```python\n"
        "def step_{n}(path: Path) -> Settings:\n"
        "    raw = yaml.safe_load(path.read_text())\n"
        "    return Settings(**raw)\n"
        "```\n\n"
    )
    text, n = FIRST_WORD + ", an overview.\n\n", 0
    while len(text) < tokens * 4:
        n += 1
        text += section.format(n=n)
    return text[: tokens * 4]


@contextmanager
def scripted_server(replies: list[dict[str, Any]]) -> Iterator[str]:
    """The scripted server in its own process (its CPU is not the client's); its base URL."""
    with tempfile.TemporaryDirectory() as name:
        script = Path(name) / "script.json"
        script.write_text(json.dumps(replies))
        server = subprocess.Popen(
            [sys.executable, "-m", "scripted_server", str(script)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,  # the scripted server sits beside mm_tui, outside the installed package
        )
        try:
            assert server.stdout is not None
            yield server.stdout.readline().strip()
        finally:
            server.terminate()
            server.wait()


def _child(*args: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "XDG_DATA_HOME": home,
            "XDG_STATE_HOME": home,
            "MM_DEBUG": "",
            "PYTHONPATH": str(ROOT),
        }
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_window_stream", *args],
            capture_output=True, text=True, env=env, cwd=home,
        )  # fmt: skip
    lines = output.stdout.strip().splitlines()
    if output.returncode or not lines:
        print(f"bench child {args[0]} failed: {output.stderr.strip()[-3000:]}", file=sys.stderr)
        return defaultdict(lambda: float("nan"))
    print(f"bench child {args[0]}: {lines[-1]}", file=sys.stderr, flush=True)
    return defaultdict(lambda: float("nan"), json.loads(lines[-1]))


# -- children --------------------------------------------------------------------------------


def child_bare_stream(base_url: str) -> dict[str, float]:
    """The least any client does: POST, read the SSE lines, parse each chunk's JSON."""
    import http.client
    from urllib.parse import urlsplit

    url = urlsplit(base_url)
    body = json.dumps({"model": "bench-model", "stream": True,
                       "messages": [{"role": "user", "content": "go"}]})  # fmt: skip
    connection = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port, timeout=120)
    cpu, wall = time.process_time(), time.perf_counter()
    connection.request("POST", f"{url.path}/chat/completions", body,
                       {"Content-Type": "application/json"})  # fmt: skip
    response = connection.getresponse()
    chunks = 0
    while line := response.readline():
        if line.startswith(b"data: {"):
            json.loads(line[6:])
            chunks += 1
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall,
            "chunks": chunks}  # fmt: skip


def _window_app(base_url: str) -> Any:
    from mm_tui.agent.config import Config
    from mm_tui.app import MMApp
    from mm_tui.window.ports import live_factory

    config = Config(base_url=base_url, model="bench-model", lsp_servers=(), permissions="allow")
    factory = live_factory(config, Path.cwd())
    return frame_timed(MMApp)(config, Path.cwd(), agent_factory=factory, history_path=None)


def _answer_text(app: Any) -> str:
    """The last answer's Markdown. A frame probe: it must not import the answer's module
    itself (0.2 s, in the window's thread), which the window loads with its first answer."""
    # Still importing (the window's core worker loads it while the first request waits):
    # no answer block yet either.
    answer_block = getattr(sys.modules.get("mm_tui.widgets.answer_blocks"), "AnswerBlock", None)
    if answer_block is None:
        return ""
    answers = app.transcript.query(answer_block)
    return answers.last().source if answers else ""


async def _finished_rows(app: Any, rows: int) -> None:
    """`rows` finished bash rows above the answer, all mounted (fewer than LIVE_MOST): the
    live window of a long session, which every layout of the transcript walks."""
    from mm_tui.agent.events import ToolFinished, ToolStarted, ToolStatus

    for n in range(rows):
        title = f"bash pytest -q tests/test_{n}.py"
        await app.transcript.start_tool(ToolStarted(f"call_{n}", "bash", {}, title))
        await app.transcript.finish_tool(
            ToolFinished(f"call_{n}", "bash", title, ToolStatus.DONE, 0.4, "1 passed\n")
        )
    await app.transcript.flush()


def child_window_stream(base_url: str, rows: int = 0) -> dict[str, float]:
    app = _window_app(base_url)
    result: dict[str, float] = {}
    expected = answer_markdown()[-40:].strip()

    async def measure() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.turns.port is not None)
            if rows:
                await _finished_rows(app, rows)
            await pilot.pause(0.2)
            done_at: list[tuple[float, float]] = []
            # Woken by the frame probe, not by polling: a look 20 times a second would wake
            # the window's loop as often and count its cost as the window's.
            done = asyncio.Event()

            def finished() -> bool:
                if not done_at and not app.turns.running and expected in _answer_text(app)[-80:]:
                    done_at.append((time.process_time(), time.perf_counter()))
                    done.set()
                return bool(done_at)

            app.probe = finished
            cpu, wall = time.process_time(), time.perf_counter()
            frames = len(app.frames)
            app.turns.submit("go")
            await asyncio.wait_for(done.wait(), timeout=600)
            result["cpu"] = done_at[0][0] - cpu
            result["wall"] = done_at[0][1] - wall
            result["fps"] = (len(app.frames) - frames) / result["wall"]
            app.probe = None
            await pilot.exit(None)

    asyncio.run(measure())
    app.turns.close()
    return result


def child_first_token_p(base_url: str, spawned: float) -> None:
    """`-p`: the headless turn; the parent watches stdout for the first token."""
    from mm_tui.agent.config import Config
    from mm_tui.headless import run_headless

    config = Config(base_url=base_url, model="bench-model", lsp_servers=(), permissions="allow")
    run_headless(config, Path.cwd(), "go")


def child_first_token_window(base_url: str, spawned: float) -> dict[str, float]:
    from mm_tui.widgets.prompt import PromptInput

    app = _window_app(base_url)
    result: dict[str, float] = {}

    async def measure() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: bool(app.frames))
            first_frame = app.frames[0]
            app.probe = lambda: FIRST_WORD in _answer_text(app)[:20]
            sent = time.perf_counter()
            app.query_one(PromptInput).post_message(PromptInput.Submitted("go"))
            # Looked for seldom: a look every millisecond would wake the window's loop, which
            # then takes the GIL from the worker building the core (the frame probe records
            # the moment the token shows, not this loop).
            await until(lambda: any(state for _, state in app.probed), limit=60, poll=0.05)
            shown = next(moment for moment, state in app.probed if state)
            now = time.perf_counter()
            result["first_token"] = (time.time() - spawned - (now - shown)) * 1000
            result["first_frame"] = (time.time() - spawned - (now - first_frame)) * 1000
            result["after_message"] = (shown - sent) * 1000
            await pilot.exit(None)

    asyncio.run(measure())
    return result


# -- the parent --------------------------------------------------------------------------------


def _median_run(runs: list[dict[str, float]]) -> dict[str, float]:
    """The run whose CPU is the median (its other figures with it)."""
    ordered = sorted(runs, key=lambda run: run["cpu"])
    return ordered[len(ordered) // 2]


def bench_cpu() -> list[dict[str, Any]]:
    rows = []
    text = answer_markdown()
    for rate in (*RATES, 0):
        delay = 1 / rate if rate else 0.0
        reply = {"text": text, "chunk_size": 4, "delay": delay}
        rounds = ROUNDS if rate == 50 else 1
        with scripted_server([reply] * (2 * rounds + 2)) as base_url:
            # The aim's two figures alternated, each the median of `rounds`: one run of the bare
            # read swings 0.16-0.27 s on this machine, the window's 0.34-0.35 s.
            pairs = [(_child("bare-stream", base_url), _child("window-stream", base_url))
                     for _ in range(rounds)]  # fmt: skip
            bare, window = (_median_run([pair[n] for pair in pairs]) for n in (0, 1))
            long = _child("window-stream", base_url, str(ROWS_ABOVE)) if rate == 50 else window
        per = 1000 / TOKENS
        label = f"at {rate} tokens/s" if rate else "at wire speed"
        rows.append(
            row(f"streaming {label}: CPU s per 1,000 tokens, window vs bare SSE read"
                + (f" (medians of {rounds} alternated runs)" if rounds > 1 else ""),
                window["cpu"] * per, bare["cpu"] * per, unit="s",
                max_ratio=2 if rate == 50 else None)
        )  # fmt: skip
        if rate:
            rows.append(
                row(f"streaming {label}: frames drawn per second (window; floor: chunks/s)",
                    window["fps"], bare["chunks"] / bare["wall"], unit="fps",
                    max_value=20.01 if rate == 50 else None)
            )  # fmt: skip
        if rate == 50:
            rows += floor_rows(bare["cpu"], window["cpu"])
            rows.append(
                row(f"streaming {label} below {ROWS_ABOVE} finished rows: CPU s per 1,000 "
                    "tokens, window vs bare SSE read", long["cpu"] * per, bare["cpu"] * per,
                    unit="s")
            )  # fmt: skip
        else:
            rows.append(
                row(f"streaming {label}: submit to last frame, window vs bare SSE read",
                    window["wall"] * 1000, bare["wall"] * 1000)
            )  # fmt: skip
    return rows


def floor_rows(bare_cpu: float, window_cpu: float) -> list[dict[str, Any]]:
    """What bare Textual costs with the window's screen for the 20 s of 1,000 tokens at 50
    tokens/s (stream_floor.py), beside the bare read: how close to it the window can get."""
    floors = {mode: _child(f"floor-{mode}")["cpu"] for mode in FLOOR_MODES}
    rows = [
        row(f"floor: bare Textual, same screen, {what}, {SECONDS:g} s: CPU s vs bare SSE read",
            floors[mode], bare_cpu, unit="s")
        for mode, what in FLOOR_MODES.items()
    ]  # fmt: skip
    rows.append(
        row("streaming at 50 tokens/s: CPU s per 1,000 tokens, window vs floor (spinner, lines)",
            window_cpu, floors["lines"], unit="s")
    )  # fmt: skip
    rows.append(
        row("streaming at 50 tokens/s: CPU s per 1,000 tokens, window vs floor (line-gated tail)",
            window_cpu, floors["tail"], unit="s")
    )  # fmt: skip
    return rows


def bench_first_token() -> list[dict[str, Any]]:
    reply = {"text": FIRST_WORD + ", the answer." * 20, "chunk_size": 4}
    headless: list[float] = []
    window: list[dict[str, float]] = []
    with scripted_server([reply] * (2 * FIRST_TOKEN_RUNS + 2)) as base_url:
        for _ in range(FIRST_TOKEN_RUNS):  # interleaved: both see the same load
            headless.append(_first_token_p(base_url))
            window.append(_child("first-token-window", base_url, repr(time.time())))
    after = [run["after_message"] for run in window if run["after_message"] == run["after_message"]]
    spawn = [run["first_token"] for run in window if run["first_token"] == run["first_token"]]
    p_ms = statistics.median(headless)
    return [
        row("first token from spawn (message sent at the first frame): window vs -p",
            statistics.median(spawn or [float("nan")]), p_ms, max_excess=50),
        # The "first token after the first message": -p's message is given at spawn,
        # the window's when it is typed (here at its first frame).
        row("first token after the message is given: window (sent at its first frame) vs -p "
            "(from spawn)", statistics.median(after or [float("nan")]), p_ms, max_excess=50),
    ]  # fmt: skip


def _first_token_p(base_url: str) -> float:
    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "XDG_DATA_HOME": home,
            "XDG_STATE_HOME": home,
            "MM_DEBUG": "",
            "PYTHONPATH": str(ROOT),
        }
        spawned = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_window_stream", "first-token-p", base_url, "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=home,
        )  # fmt: skip
        assert child.stdout is not None
        seen = b""
        while FIRST_WORD.encode() not in seen:
            data = os.read(child.stdout.fileno(), 4096)
            if not data:
                raise RuntimeError("-p ended before its first token")
            seen += data
        shown = time.perf_counter()
        child.wait()
    return (shown - spawned) * 1000


def run() -> list[dict[str, Any]]:
    return [*bench_first_token(), *bench_cpu()]


if __name__ == "__main__":
    CHILDREN = {
        "bare-stream": lambda a: child_bare_stream(a[0]),
        "window-stream": lambda a: child_window_stream(a[0], int(a[1]) if a[1:] else 0),
        "first-token-window": lambda a: child_first_token_window(a[0], float(a[1])),
        "first-token-p": lambda a: child_first_token_p(a[0], float(a[1])),
        **{f"floor-{mode}": lambda a, mode=mode: child_floor(mode) for mode in FLOOR_MODES},
    }
    if len(sys.argv) > 1 and sys.argv[1] in CHILDREN:
        outcome = CHILDREN[sys.argv[1]](sys.argv[2:])
        if outcome is not None:
            print(json.dumps(outcome), flush=True)
        os._exit(0)  # do not wait for the Agent's worker threads
    print_rows(run())
