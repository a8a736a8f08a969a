"""Long work as a person sees it: a huge answer streamed token by token, and a turn of many calls.

What the person sees is measured, not what a test feeds: the scripted server (its own process)
streams over real SSE, the real `openai` client and Agent read it, and the real window (ticking,
not in still mode) draws it. Each frame the window draws is turned into the bytes a terminal
would get (`render_segments`, the driver's own call; headless Textual skips it), and the moment
is the first frame whose bytes hold what is looked for.

- Long answer: one answer of `ITEMS` Markdown list items (each with bold and code, as models
  write them), 4 characters a chunk (~1 token), at wire speed and paced at `PACED_TOKENS`
  tokens a second. The figure: seconds from the server sending the last token (it records when
  each reply was all sent) to the first frame drawing the last item whole. Aim: under 3 s, an
  absolute aim: the row's baseline is the aim itself (as the other absolute rows, "vs 1 s").
  `mm-tui -p` (headless, stdout piped) on the same script, from the same moment to the last
  item in its output, goes to stderr for information: it is about 0 or a little below (`-p`
  prints the last item before the server has recorded the reply as sent), so a ratio to it
  means nothing. (bench_window_rows' huge answer is one delta in still mode: the streaming
  path, which lays the open list out again as it grows, never runs there.)
- Many calls: one turn of `CALLS` model calls of 4 tool calls each (read_file and bash,
  alternating, each call different: the loop detector stops repeats), then a one-line answer.
  The figure: from the first request reaching the server to the frame showing that answer;
  baseline: `-p`, to the answer in its output. Aim: at most 1.3x. Beside it, the CPU of each
  whole process (user and system, every thread, start-up included).

Each figure is the median of `RUNS` runs (`BENCH_RUNS`), window and `-p` alternated, each in
a fresh interpreter (`python -m bench.bench_window_long [wire|paced|calls]`); the spread
(min-max) and each window run's CPU by thread (the UI's is `MainThread`, the turn's
`asyncio_0`; the model stream's readers have ended) go to stderr. `BENCH_PROFILE=FILE` writes
the window child's cProfile (its UI thread's CPU) to FILE.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.measure import print_rows, row
from bench.window_harness import SIZE, until

ITEMS = 5000
PACED_TOKENS = 1000  # tokens a second: a fast local model
ANSWER_AIM = 3.0  # seconds from the last token sent to the last item drawn
CALLS = 300
RUNS = 3
FINAL = "All the calls are done."
ROOT = Path(__file__).resolve().parents[1]
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # colours and styles inside a line


def long_answer(items: int = ITEMS) -> str:
    """A list as a model writes one: each item with bold and code (inline Markdown)."""
    return "Here is every case:\n\n" + "".join(
        f"- **item {n}**: `case_{n}` passed\n" for n in range(1, items + 1)
    )


def last_item(items: int = ITEMS, *, drawn: bool = True) -> str:
    """The last item as drawn (its marks gone), or as written (`-p` prints the Markdown)."""
    return f"item {items}: case_{items} passed" if drawn else f"**item {items}**: `case_{items}`"


def calls_script(calls: int = CALLS) -> list[dict[str, Any]]:
    replies: list[dict[str, Any]] = []
    for n in range(calls):
        tools = [
            {"name": "read_file", "arguments": {"path": f"notes/{2 * n}.txt"}},
            {"name": "bash", "arguments": {"command": f"echo step {n}"}},
            {"name": "read_file", "arguments": {"path": f"notes/{2 * n + 1}.txt"}},
            {"name": "bash", "arguments": {"command": f"echo check {n}"}},
        ]
        replies.append({"tool_calls": tools, "chunk_size": 16})
    replies.append({"text": FINAL, "chunk_size": 4})
    return replies


# -- the server, in its own process, saying when it sent what ---------------------------------


def child_serve(script: str) -> None:
    from scripted_server import ScriptedServer, load_script

    stop = False

    def stopped(*_: object) -> None:
        nonlocal stop
        stop = True

    signal.signal(signal.SIGTERM, stopped)
    with ScriptedServer() as server:
        server.extend(load_script(script))
        print(server.base_url, flush=True)
        while not stop:
            time.sleep(0.05)
        times = {"arrived": server.arrived_at, "answered": server.answered_at}
    print(json.dumps(times), flush=True)


@contextmanager
def timed_server(replies: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, list[float]]]]:
    """(base URL, times): `times` is filled once the block ends with when each request
    arrived and when its reply was all sent (time.monotonic, the same clock in every
    process of the machine)."""
    times: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as name:
        script = Path(name) / "script.json"
        script.write_text(json.dumps(replies))
        server = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_window_long", "serve", str(script)],
            stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert server.stdout is not None
        try:
            yield server.stdout.readline().strip(), times
        finally:
            server.send_signal(signal.SIGTERM)
            out, _ = server.communicate(timeout=30)
            times.update(json.loads(out.strip().splitlines()[-1]))


def _env(home: str) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": home, "XDG_STATE_HOME": home, "XDG_CONFIG_HOME": home,
            "HOME": home, "MM_DEBUG": "", "PYTHONPATH": str(ROOT)}  # fmt: skip


def _workdir(home: str, calls: int = CALLS) -> None:
    """The files the calls read (each call differs: the loop detector stops repeats)."""
    notes = Path(home) / "notes"
    notes.mkdir()
    for n in range(2 * calls):
        (notes / f"{n}.txt").write_text("".join(f"line {k} of {n}\n" for k in range(8)))


# -- the window, and `-p` ----------------------------------------------------------------------


def _config(base_url: str) -> Any:
    """Every call allowed, room for every call and its results (no compaction)."""
    from mm_tui.agent.config import Config

    return Config(base_url=base_url, model="bench-model", lsp_servers=(), permissions="allow",
                  max_turns=CALLS + 10, context_window=10_000_000)  # fmt: skip


def terminal_timed(app_class: type, looked_for: str) -> type:
    """A subclass turning each frame into the terminal's bytes, noting the first frame (its
    time.monotonic) whose bytes hold `looked_for`."""
    from textual._compositor import CompositorUpdate

    class TerminalTimed(app_class):  # type: ignore[misc, valid-type]
        seen_at: float | None = None
        frames = 0

        def _display(self, screen: Any, renderable: Any) -> None:
            super()._display(screen, renderable)
            if renderable is None or self._batch_count:
                return
            self.frames += 1
            if isinstance(renderable, CompositorUpdate):
                sent = renderable.render_segments(self.console)
            else:
                sent = self.console._render_buffer(self.console.render(renderable))
            if self.seen_at is None and looked_for in _ESCAPES.sub("", sent):
                self.seen_at = time.monotonic()

    return TerminalTimed


def _threads_cpu() -> dict[str, float]:
    """The CPU seconds (user and system) of each live thread of this process by its name
    (threads of one name added up), read from /proc (nothing where there is none)."""
    import threading

    names = {thread.native_id: thread.name for thread in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    for task in Path("/proc/self/task").glob("*"):
        try:
            fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended meanwhile
        name = names.get(int(task.name), "other")
        spent[name] = spent.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / tick
    return spent


def _count_takes() -> dict[str, float]:
    """Counts the window's takes of events and their CPU as its pace sees them (each from
    its start to its frame drawn), into the dict returned."""
    from mm_tui.window.event_bridge import TakePace

    counted = {"takes": 0, "takes' CPU": 0.0}
    drawn = TakePace.drawn

    def counted_drawn(pace: TakePace) -> None:
        if pace._take_cpu is not None:  # noqa: SLF001 - the bench's probe
            counted["takes"] += 1
            counted["takes' CPU"] += pace._cpu() - pace._take_cpu  # noqa: SLF001
        drawn(pace)

    TakePace.drawn = counted_drawn  # pyright: ignore[reportAttributeAccessIssue]  # a probe
    return counted


def child_window(base_url: str, looked_for: str) -> dict[str, float]:
    from mm_tui.app import MMApp
    from mm_tui.window.ports import live_factory

    cwd = Path.cwd()
    takes = _count_takes()
    config = _config(base_url)
    app = terminal_timed(MMApp, looked_for)(
        config, cwd, agent_factory=live_factory(config, cwd), history_path=None
    )
    result: dict[str, float] = {}
    profile = os.environ.get("BENCH_PROFILE")

    async def measure() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await until(lambda: app.turns.port is not None)
            await pilot.pause(0.2)
            cpu, threads, taken = time.process_time(), _threads_cpu(), dict(takes)
            app.turns.submit("go")
            await until(lambda: app.turns.running or app.seen_at is not None)

            ended: list[float] = []

            def seen_or_over() -> bool:  # a turn that ended without it fails soon
                if app.seen_at is None and not app.turns.running:
                    ended.append(time.monotonic())
                    if ended[-1] - ended[0] > 10:
                        raise RuntimeError(f"the turn ended without showing {looked_for!r}")
                return app.seen_at is not None

            await until(seen_or_over, limit=900, poll=0.05)
            result["seen"] = app.seen_at or 0.0
            result["cpu"] = time.process_time() - cpu
            live = 0.0
            for name, spent in _threads_cpu().items():  # each thread's share of it
                result[f"cpu {name}"] = round(spent - threads.get(name, 0.0), 2)
                live += result[f"cpu {name}"]
            result["cpu of threads that ended"] = round(result["cpu"] - live, 2)
            result["frames"] = app.frames
            result.update({key: round(takes[key] - taken[key], 2) for key in takes})
            screen = app.export_screenshot()
            result["on_screen"] = float(looked_for.split()[-2] in screen)
            await pilot.exit(None)

    if profile:
        import cProfile

        with cProfile.Profile(time.thread_time) as profiler:  # the UI thread's CPU
            asyncio.run(measure())
        profiler.dump_stats(profile)
    else:
        asyncio.run(measure())
    app.turns.close()
    return result


def child_headless(base_url: str) -> None:
    from mm_tui.headless import run_headless

    config = _config(base_url)
    run_headless(config, Path.cwd(), "go")


def _run_window(base_url: str, looked_for: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        _workdir(home)
        with tempfile.TemporaryFile("w+") as errors:
            child = subprocess.Popen(
                [sys.executable, "-m", "bench.bench_window_long", "window", base_url, looked_for],
                stdout=subprocess.PIPE, stderr=errors, text=True, env=_env(home), cwd=home,
            )  # fmt: skip
            assert child.stdout is not None
            out = child.stdout.read()
            cpu = _cpu_of(child)
            errors.seek(0)
            err = errors.read()
    lines = out.strip().splitlines()
    if child.returncode or not lines:
        print(f"window child failed: {err.strip()[-3000:]}", file=sys.stderr)
        return {"seen": float("nan"), "process_cpu": cpu}
    return {**json.loads(lines[-1]), "process_cpu": cpu}


def _cpu_of(child: subprocess.Popen[Any]) -> float:
    """The CPU seconds (user and system, every thread) of a child whose output ended, read as
    it is reaped (so not by `wait()`, which reaps it without them)."""
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime


def _run_headless(base_url: str, looked_for: str) -> dict[str, float]:
    """`-p` with stdout piped; when `looked_for` showed in its output (time.monotonic)."""
    with tempfile.TemporaryDirectory() as home:
        _workdir(home)
        child = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_window_long", "headless", base_url],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=_env(home), cwd=home,
        )  # fmt: skip
        assert child.stdout is not None
        seen, tail = float("nan"), b""
        while data := os.read(child.stdout.fileno(), 65536):
            tail = (tail + data)[-4096:]
            if seen != seen and looked_for.encode() in tail:
                seen = time.monotonic()
        cpu = _cpu_of(child)
    return {"seen": seen, "process_cpu": cpu}


# -- the parent ----------------------------------------------------------------------------


def _spread(values: list[float]) -> str:
    good = [value for value in values if value == value]
    return f"{min(good):.2f}–{max(good):.2f}" if good else "nan"


def bench_answer(paced: bool, runs: int = RUNS, items: int = ITEMS) -> list[dict[str, Any]]:
    reply = {"text": long_answer(items), "chunk_size": 4, "delay": 1 / PACED_TOKENS if paced else 0}
    window, headless, window_cpu, headless_cpu = [], [], [], []
    for _ in range(runs):
        for kind, into, cpu in (("window", window, window_cpu),
                                ("headless", headless, headless_cpu)):  # fmt: skip
            with timed_server([reply]) as (base_url, times):
                if kind == "window":
                    seen = _run_window(base_url, last_item(items))
                else:
                    seen = _run_headless(base_url, last_item(items, drawn=False))
            into.append(seen["seen"] - times["answered"][-1])
            cpu.append(seen["process_cpu"])
            print(f"answer {'paced' if paced else 'wire'} {kind}: {into[-1]:.2f} s "
                  f"{seen}", file=sys.stderr, flush=True)  # fmt: skip
    label = f"at {PACED_TOKENS} tokens/s" if paced else "at wire speed"
    print(f"answer {label}: last token sent to last item shown: window {_spread(window)} s, "
          f"-p {_spread(headless)} s (median {statistics.median(headless):.2f} s; for "
          "information: -p prints before the server records the reply as sent)",
          file=sys.stderr)  # fmt: skip
    what = f"one answer of {items:,} list items streamed {label} (4 characters a chunk)"
    return [
        row(f"{what}: last token sent to its last item drawn in the window vs 3 s (median of "
            f"{runs})", statistics.median(window), ANSWER_AIM, unit="s", max_value=ANSWER_AIM),
        row(f"{what}: CPU of the whole process (start-up and exit too), window vs -p",
            statistics.median(window_cpu), statistics.median(headless_cpu), unit="s"),
    ]  # fmt: skip


def bench_calls(runs: int = RUNS, calls: int = CALLS) -> list[dict[str, Any]]:
    script = calls_script(calls)
    window, headless, window_cpu, headless_cpu = [], [], [], []
    for _ in range(runs):
        for kind, into, cpu in (("window", window, window_cpu),
                                ("headless", headless, headless_cpu)):  # fmt: skip
            with timed_server(script) as (base_url, times):
                runner = _run_window if kind == "window" else _run_headless
                seen = runner(base_url, FINAL)
            into.append(seen["seen"] - times["arrived"][0])
            cpu.append(seen["process_cpu"])
            print(f"calls {kind}: {into[-1]:.2f} s {seen}", file=sys.stderr, flush=True)
    ratios = [w / h for w, h in zip(window, headless, strict=True)]
    print(f"calls: window {_spread(window)} s, -p {_spread(headless)} s, "
          f"ratios {_spread(ratios)}; CPU window {_spread(window_cpu)} s, "
          f"-p {_spread(headless_cpu)} s", file=sys.stderr)  # fmt: skip
    what = f"one turn of {calls} model calls of 4 tool calls each"
    return [
        row(f"{what}: first request to its answer shown, window vs -p (medians of {runs})",
            statistics.median(window), statistics.median(headless), unit="s", max_ratio=1.3),
        row(f"{what}: CPU of the whole process (start-up and exit too), window vs -p",
            statistics.median(window_cpu), statistics.median(headless_cpu), unit="s"),
    ]  # fmt: skip


def run() -> list[dict[str, Any]]:
    return [*bench_answer(paced=False), *bench_answer(paced=True), *bench_calls()]


if __name__ == "__main__":
    CHILDREN = {
        "serve": lambda a: child_serve(a[0]),
        "window": lambda a: child_window(a[0], a[1]),
        "headless": lambda a: child_headless(a[0]),
    }
    if len(sys.argv) > 1 and sys.argv[1] in CHILDREN:
        outcome = CHILDREN[sys.argv[1]](sys.argv[2:])
        if outcome is not None:
            print(json.dumps(outcome), flush=True)
        sys.stdout.flush()
        os._exit(0)  # do not wait for the Agent's worker threads
    which = sys.argv[1:] or ["wire", "paced", "calls"]
    runs = int(os.environ.get("BENCH_RUNS", RUNS))
    rows: list[dict[str, Any]] = []
    if "wire" in which:
        rows += bench_answer(paced=False, runs=runs)
    if "paced" in which:
        rows += bench_answer(paced=True, runs=runs)
    if "calls" in which:
        rows += bench_calls(runs=runs)
    print_rows(rows)
