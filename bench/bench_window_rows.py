"""The window at any length: a realistic transcript at 100, 500, 2,000 and 5,000 tool rows.

For each size, in a fresh interpreter: a session file of turns (a message, five tool calls,
a Markdown answer with a list and code, the summary) is replayed at speed 0, the way a long
session is opened; then, on the finished transcript, key to frame (p95 of 20 presses) for
folding the last row (Enter), typing in the prompt, and a streamed answer's new paragraph,
and the process's memory. The floor at each size is bare Textual (`BareWindow`) holding as
many one-line Statics: composing them, toggling the last one, typing in its real TextArea.

Aims: at 5,000 rows typing p95 < 16 ms, fold p95 < 50 ms, RSS < 150 MB, replay to
its last frame < 2 s; and no figure at 5,000 rows more than 1.5x its value at 100 rows.

Also: one answer holding 5,000 list items (and one with a 5,000-row table) delivered at once,
to the settled frame showing its end; aim < 1 s and < 100 MB. The floor is bare Textual showing
the same text in a Static.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.measure import print_rows, row
from bench.window_harness import (
    ROWS_PER_TURN,
    SIZE,
    bare_window_class,
    frame_timed,
    huge_answer,
    key_to_frame,
    p95,
    realistic_session,
    rss_mb,
    settled,
    until,
)

SIZES = (100, 500, 2000, 5000)
PRESSES = 20
HUGE_ITEMS = 5000
#: A replay that takes longer is stopped and its size reported as missed (the old window
#: needed minutes for 2,000 rows).
REPLAY_LIMIT = float(os.environ.get("BENCH_REPLAY_LIMIT", "180"))
NAN = float("nan")


def _transcript_lines(rows: int) -> int:
    """One-line blocks the window shows for `rows` rows: rows, messages, summaries."""
    return rows + 2 * max(1, rows // ROWS_PER_TURN)


# -- children --------------------------------------------------------------------------------


async def _bare_rows(rows: int) -> dict[str, float]:
    from textual.widgets import Static, TextArea

    started, cpu = time.perf_counter(), time.process_time()
    app = frame_timed(bare_window_class(_transcript_lines(rows)))()
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: bool(app.frames))
        built = (app.frames[0] - started) * 1000
        built_cpu = (time.process_time() - cpu) * 1000
        last = app.query("#transcript > Static").last()
        await pilot.pause()
        assert isinstance(last, Static)
        fold = await key_to_frame(
            app, lambda _: ["ctrl+t"], lambda press: (press % 2 == 0) == ("world" in app.shown),
            PRESSES if rows < 2000 else 5,  # bare Textual takes seconds a press there
        )  # fmt: skip
        fold_cpu = p95(app.cpu_ms)
        area = app.query_one(TextArea)
        typed = await key_to_frame(
            app, lambda _: ["x"], lambda press: len(area.text) == press + 1, PRESSES
        )
        result = {"replay": built, "fold": p95(fold), "type": p95(typed), "delta": p95(typed),
                  "rss": rss_mb(), "replay_cpu": built_cpu, "fold_cpu": fold_cpu,
                  "type_cpu": p95(app.cpu_ms), "delta_cpu": p95(app.cpu_ms)}  # fmt: skip
        await pilot.exit(None)
    return result


async def _window_rows(rows: int) -> dict[str, float]:
    from mm_tui.agent.config import Config
    from mm_tui.agent.events import TextDelta, TurnStarted
    from mm_tui.app import MMApp
    from mm_tui.replay import END_OF_REPLAY, Pace, Replay
    from mm_tui.widgets.answer_blocks import AnswerBlock
    from mm_tui.widgets.blocks import SummaryLine
    from mm_tui.widgets.prompt import PromptInput
    from mm_tui.widgets.tool_row import ToolRow
    from mm_tui.window.replay_source import replay_factory

    session = realistic_session(rows)
    started, cpu = time.perf_counter(), time.process_time()
    meta = {key: str(session[key]) for key in ("model", "base_url", "cwd")}
    factory = replay_factory(Replay(session, Pace(speed=0)), meta, cwd=Path("/bench"))
    app = frame_timed(MMApp)(Config(model="bench-model"), Path("/bench"), agent_factory=factory,
                             build_in_worker=False, history_path=None, still=True)  # fmt: skip

    def replayed() -> bool:  # the end said, below the last turn's summary
        children = app.transcript.children
        return (
            len(children) > 1
            and getattr(children[-1], "text", None) == END_OF_REPLAY
            and isinstance(children[-2], SummaryLine)
        )

    app.probe = replayed
    result = dict.fromkeys(FIGURES, NAN) | dict.fromkeys(CPU_FIGURES, NAN)
    async with app.run_test(size=SIZE) as pilot:
        try:
            await until(lambda: any(state for _, state in app.probed), limit=REPLAY_LIMIT)
        except TimeoutError:
            result["replay"] = REPLAY_LIMIT * 1000
            result["rss"] = rss_mb()
            _report(result)  # the replay still plays: leave without waiting for it
        first = next(n for n, (_, state) in enumerate(app.probed) if state)
        result["replay"] = (app.probed[first][0] - started) * 1000
        result["replay_cpu"] = (app.probed_cpu[first] - cpu) * 1000
        app.probe = None
        await settled(app, quiet=0.2)
        last = app.transcript.query(ToolRow).last()  # the newest row (rows revived go last)
        last.focus()
        await pilot.pause()

        def folded_as_asked(press: int) -> bool:
            """The frame shows the fold done: unfolded, the whole body laid out (every
            widget in it has its size); folded, the row back to its one line."""
            if press % 2:
                return not last.expanded and not last.children and last.size.height == 1
            body = list(last.walk_children(with_self=False))
            return last.expanded and bool(body) and all(w.size.height for w in body)

        result["fold"] = p95(await key_to_frame(app, lambda _: ["enter"], folded_as_asked, PRESSES))
        result["fold_cpu"] = p95(app.cpu_ms)
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await pilot.pause()
        result["type"] = p95(await key_to_frame(
            app, lambda _: ["x"], lambda press: prompt.text == "x" * (press + 1), PRESSES
        ))  # fmt: skip
        result["type_cpu"] = p95(app.cpu_ms)
        app.bridge(TurnStarted("one more"))
        app.bridge(TextDelta("A live answer."))
        await until(lambda: bool(app.transcript.query(AnswerBlock)))
        await settled(app, quiet=0.2)
        answer = app.transcript.query(AnswerBlock).last()
        deltas, delta_cpu = [], []
        for n in range(PRESSES):
            marker = f"paragraph {n} "
            app.probed.clear()
            app.probed_cpu.clear()
            app.probe = lambda: marker in answer.source[-100:]  # noqa: B023
            sent, cpu = time.perf_counter(), time.process_time()
            app.bridge(TextDelta(f"\n\nThis is {marker}of the live answer."))
            await until(lambda: any(state for _, state in app.probed), limit=30)
            first = next(n for n, (_, state) in enumerate(app.probed) if state)
            deltas.append((app.probed[first][0] - sent) * 1000)
            delta_cpu.append((app.probed_cpu[first] - cpu) * 1000)
            app.probe = None
            await asyncio.sleep(0.1)
        result["delta"], result["delta_cpu"] = p95(deltas), p95(delta_cpu)
        result["rss"] = rss_mb()
        _report(result)
    return result


async def _huge(kind: str, floor: bool) -> dict[str, float]:
    from textual.containers import VerticalScroll
    from textual.widgets import Static

    from mm_tui.agent.config import Config
    from mm_tui.agent.events import AssistantMessageDone, TextDelta, TurnEnded, TurnStarted
    from mm_tui.app import MMApp

    text = huge_answer(HUGE_ITEMS, kind)
    last_words = f"{HUGE_ITEMS}"
    if floor:
        app = frame_timed(bare_window_class())()
    else:
        app = frame_timed(MMApp)(
            Config(model="bench-model"), Path("/bench"), history_path=None, still=True
        )
    async with app.run_test(size=SIZE) as pilot:
        await until(lambda: bool(app.frames))
        await pilot.pause(0.3)
        before = rss_mb()
        started, cpu = time.perf_counter(), time.process_time()
        if floor:
            transcript = app.query_one("#transcript", VerticalScroll)
            transcript.anchor()
            await transcript.mount(Static(text, markup=False))
        else:
            for event in (TurnStarted("show every case"), TextDelta(text),
                          AssistantMessageDone(text, ""), TurnEnded("answered")):  # fmt: skip
                app.bridge(event)
            await until(lambda: not app.turns.running and not app.bridge._pending, limit=300)
        await pilot.pause()  # returns once the app has handled every message it was sent
        shown = await settled(app, quiet=0.5, limit=300)  # the frame of the final state
        spent = (time.process_time() - cpu) * 1000  # to the settled frame, and its quiet wait
        screen = app.export_screenshot()
        if last_words not in screen:
            raise RuntimeError(f"the {kind}'s last item is not on the screen")
        result = {"shown": (shown - started) * 1000, "rss": rss_mb(), "before": before,
                  "cpu": spent}  # fmt: skip
        _report(result)
    return result


def _report(result: dict[str, float]) -> None:
    """Print the child's figures and leave at once (no teardown to wait for or fail)."""
    print(json.dumps(result), flush=True)
    os._exit(0)


def _child(*args: str) -> dict[str, float]:
    output = subprocess.run(
        [sys.executable, "-m", "bench.bench_window_rows", *args],
        capture_output=True, text=True,
    )  # fmt: skip
    lines = output.stdout.strip().splitlines()
    if output.returncode or not lines:
        print(f"bench child {args} failed: {output.stderr.strip()[-3000:]}", file=sys.stderr)
        return {}
    print(f"bench child {args}: {lines[-1]}", file=sys.stderr, flush=True)
    return json.loads(lines[-1])


# -- the parent --------------------------------------------------------------------------------

FIGURES = {
    "replay": ("replay (speed 0) to its last frame; floor: compose as many Statics", "ms"),
    "fold": ("Enter folds the last row, key to frame p95", "ms"),
    "type": ("a key typed in the prompt, key to frame p95 (floor: a real TextArea)", "ms"),
    "delta": ("a streamed paragraph, delta to frame p95", "ms"),
    "rss": ("process memory (RSS)", "MB"),
}
AIMS_AT_LARGEST = {"replay": 2000, "fold": 50, "type": 16, "rss": 150}
#: The same figures in CPU milliseconds of the process (a shared machine's load aside).
CPU_FIGURES = {
    "replay_cpu": "replay to its last frame, CPU",
    "fold_cpu": "Enter folds the last row, CPU p95",
    "type_cpu": "a key typed in the prompt, CPU p95",
    "delta_cpu": "a streamed paragraph, CPU p95",
}


def bench_sizes(sizes: tuple[int, ...] = SIZES) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    measured: dict[int, dict[str, float]] = {}
    for size in sizes:
        bare, window = _child("bare", str(size)), _child("window", str(size))
        measured[size] = window
        for key, (label, unit) in FIGURES.items():
            aim = AIMS_AT_LARGEST.get(key) if size == max(sizes) else None
            rows.append(row(f"{size:,} rows: {label}", window.get(key, NAN), bare.get(key, NAN),
                            unit=unit, max_value=aim))  # fmt: skip
        for key, label in CPU_FIGURES.items():
            rows.append(row(f"{size:,} rows: {label}", window.get(key, NAN), bare.get(key, NAN),
                            unit="ms cpu"))  # fmt: skip
    small, large = min(sizes), max(sizes)
    for key, (label, unit) in FIGURES.items():
        if key == "replay":
            continue  # opening a session grows with it; its own aim is above
        rows.append(row(f"{large:,} rows vs {small:,}: {label}", measured[large].get(key, NAN),
                        measured[small].get(key, NAN), unit=unit, max_ratio=1.5))  # fmt: skip
    return rows


def bench_huge() -> list[dict[str, Any]]:
    rows = []
    for kind in ("list", "table"):
        floor, window = _child("huge-floor", kind), _child("huge", kind)
        what = f"one answer of {HUGE_ITEMS:,} {'list items' if kind == 'list' else 'table rows'}"
        rows.append(row(f"{what}: delivered to its settled frame (floor: a Static)",
                        window.get("shown", NAN), floor.get("shown", NAN), max_value=1000))  # fmt: skip
        rows.append(row(f"{what}: CPU to the settled frame and 0.5 s quiet",
                        window.get("cpu", NAN), floor.get("cpu", NAN), unit="ms cpu"))  # fmt: skip
        rows.append(row(f"{what}: process memory (RSS)", window.get("rss", NAN),
                        floor.get("rss", NAN), unit="MB", max_value=100))  # fmt: skip
    return rows


def run() -> list[dict[str, Any]]:
    return [*bench_sizes(), *bench_huge()]


if __name__ == "__main__":
    CHILDREN = {
        "bare": lambda a: _bare_rows(int(a[0])),
        "window": lambda a: _window_rows(int(a[0])),
        "huge": lambda a: _huge(a[0], floor=False),
        "huge-floor": lambda a: _huge(a[0], floor=True),
    }
    if len(sys.argv) > 1 and sys.argv[1] in CHILDREN:
        _report(asyncio.run(CHILDREN[sys.argv[1]](sys.argv[2:])))
    sizes = tuple(int(arg) for arg in sys.argv[1:]) or SIZES
    print_rows([*bench_sizes(sizes), *bench_huge()])
