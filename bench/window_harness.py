"""What the window benches share: frame timing, the bare Textual floor, realistic sessions.

- `frame_timed(App)` records every rendered frame by hooking `App._display`, which Textual
  calls with each update it draws (headless too: the compositor renders the same strips, only
  the driver's write is skipped).
- `BareWindow` is the floor: bare Textual with the window's own kinds of widget (a one-line
  top Static, a VerticalScroll of one-line Statics, a status Static, a real `TextArea`, a
  Footer) and no mm-tui code. Enter in the transcript toggles a Static, as a fold would.
- `realistic_session(rows)` is a session file as the core writes it: turns of a user message,
  five tool calls over two assistant messages (bash, read_file, edit_file with a diff), and a
  Markdown answer with a list and a code block; replayed, every turn ends with its summary.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SIZE = (120, 40)
ROWS_PER_TURN = 5


def frame_timed(app_class: type) -> type:
    """A subclass recording each rendered frame: its time, and what `probe()` said then."""

    class FrameTimed(app_class):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.frames: list[float] = []
            self.probed: list[tuple[float, bool]] = []
            self.probed_cpu: list[float] = []  # the process's CPU seconds at each probed frame
            self.probe: Callable[[], bool] | None = None

        def _display(self, screen: Any, renderable: Any) -> None:
            if renderable is not None:
                now = time.perf_counter()
                self.frames.append(now)
                if self.probe is not None:
                    self.probed.append((now, self.probe()))
                    self.probed_cpu.append(time.process_time())
            super()._display(screen, renderable)

    return FrameTimed


def bare_window_class(rows: int = 1) -> type:
    """The floor: bare Textual holding the window's kinds of widget, `rows` lines of transcript."""
    from textual.app import App, ComposeResult
    from textual.binding import Binding
    from textual.containers import VerticalScroll
    from textual.widgets import Footer, Static, TextArea

    class BareWindow(App[None]):
        CSS = """
        #top, #status { height: 1; }
        #transcript { height: 1fr; }
        #transcript > Static { height: auto; }
        TextArea { height: auto; min-height: 3; max-height: 10; }
        """
        BINDINGS = [Binding("ctrl+t", "toggle", "Toggle")]
        shown = "hello"

        def compose(self) -> ComposeResult:
            yield Static("model · server · cwd", id="top")
            with VerticalScroll(id="transcript"):
                for n in range(rows):
                    yield Static(f"‣ bash echo {n}  ✓ done 0.1s")
            yield Static("", id="status")
            yield TextArea(id="prompt")
            yield Footer()

        def on_mount(self) -> None:
            area = self.query_one(TextArea)
            area.cursor_blink = False  # as the window's still mode: frames only when asked
            area.focus()

        def action_toggle(self) -> None:
            self.shown = "world\n" * 10 if self.shown == "hello" else "hello"
            self.query("#transcript > Static").last().update(self.shown)

    return BareWindow


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def until(condition: Callable[[], bool], limit: float = 60.0, poll: float = 0.001) -> None:
    """Yield to the app until `condition` holds; a bench that waits forever is a bug.

    `poll`: seconds between looks. A bench measuring the app's CPU looks seldom (the moment
    it measures is recorded by a frame probe, not by this loop): a look every millisecond
    wakes the event loop 1,000 times a second and costs more than the app's own frames."""
    deadline = time.perf_counter() + limit
    while not condition():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the app did not get there in {limit:g} s")
        await asyncio.sleep(poll)


async def settled(app: Any, quiet: float = 0.3, limit: float = 600.0) -> float:
    """Wait until no frame has been drawn for `quiet` seconds; the last frame's time."""
    deadline = time.perf_counter() + limit
    while True:
        await asyncio.sleep(quiet / 3)
        last = app.frames[-1] if app.frames else 0.0
        if app.frames and time.perf_counter() - last > quiet:
            return last
        if time.perf_counter() > deadline:
            raise TimeoutError(f"the app kept drawing for {limit:g} s")


async def key_to_frame(app: Any, keys: Callable[[int], list[str]],
                       shown: Callable[[int], bool], presses: int) -> list[float]:  # fmt: skip
    """Milliseconds from each key press to the first frame drawn with `shown(press)` true;
    the CPU milliseconds the process spent meanwhile go to `app.cpu_ms`."""
    times: list[float] = []
    app.cpu_ms = []
    for press in range(presses):
        await asyncio.sleep(0.05)
        app.probed.clear()
        app.probed_cpu.clear()
        app.probe = lambda: shown(press)  # noqa: B023 - reset every press
        started, cpu = time.perf_counter(), time.process_time()
        await app._press_keys(keys(press))
        await until(lambda: any(state for _, state in app.probed), limit=30)
        first = next(n for n, (_, state) in enumerate(app.probed) if state)
        times.append((app.probed[first][0] - started) * 1000)
        app.cpu_ms.append((app.probed_cpu[first] - cpu) * 1000)
        app.probe = None
    return times


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank), the figure the aims are about."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(0.95 * len(ordered)) - 1))]


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


# -- a realistic session -------------------------------------------------------------------

ANSWER = """I changed `step_{n}` so it reads the configuration once and fails early.

- the file is read once, then **validated** key by key
- a missing key names itself in the error
- the caller gets a typed `Settings`

```python
def step_{n}(path: Path) -> Settings:
    raw = yaml.safe_load(path.read_text())
    return Settings(**raw)
```

The tests pass; `ruff` and `basedpyright` are clean."""

DIFF = """--- a/app/step_{n}.py
+++ b/app/step_{n}.py
@@ -1,4 +1,5 @@
 def step_{n}(path):
-    raw = load(path)
+    raw = yaml.safe_load(path.read_text())
+    check(raw)
     return Settings(**raw)"""


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)}}  # fmt: skip


def realistic_session(rows: int) -> dict[str, Any]:
    """A session file (SPEC §8) of `rows` tool calls, five a turn, each turn answered."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent."}]
    meta: dict[str, Any] = {}
    output = "".join(f"tests/test_{n}.py::test_case PASSED\n" for n in range(12))
    for turn in range(max(1, rows // ROWS_PER_TURN)):
        messages.append({"role": "user", "content": f"Fix step {turn} and run the tests."})
        ids = [f"call_{turn}_{k}" for k in range(ROWS_PER_TURN)]
        first = [_call(ids[0], "read_file", {"path": f"app/step_{turn}.py"}),
                 _call(ids[1], "bash", {"command": f"grep -n step_{turn} -r app"})]  # fmt: skip
        second = [
            _call(ids[2], "edit_file", {"path": f"app/step_{turn}.py", "old": "a", "new": "b"}),
            _call(ids[3], "bash", {"command": "python -m pytest -q"}),
            _call(ids[4], "bash", {"command": "ruff check ."}),
        ]
        messages.append({"role": "assistant", "content": "", "tool_calls": first})
        messages.append({"role": "tool", "tool_call_id": ids[0], "content": DIFF})
        messages.append({"role": "tool", "tool_call_id": ids[1], "content": output[:200]})
        messages.append({"role": "assistant", "content": "", "tool_calls": second})
        messages.append({"role": "tool", "tool_call_id": ids[2], "content": "1 change"})
        messages.append({"role": "tool", "tool_call_id": ids[3], "content": output})
        messages.append({"role": "tool", "tool_call_id": ids[4], "content": "All checks passed!"})
        messages.append({"role": "assistant", "content": ANSWER.format(n=turn)})
        meta[ids[2]] = {"status": "done", "duration": 0.02, "diff": DIFF.format(n=turn)}
        for call_id in (ids[0], ids[1], ids[3], ids[4]):
            meta[call_id] = {"status": "done", "duration": 0.4}
    return {
        "id": "bench",
        "model": "bench-model",
        "base_url": "http://127.0.0.1:9/v1",
        "cwd": "/bench",
        "messages": messages,
        "tool_meta": meta,
        "usage": {"prompt_tokens": 1000 * rows, "completion_tokens": 100 * rows},
        "errors": [],
    }


def huge_answer(items: int, kind: str) -> str:
    """One answer holding `items` list items, or a table of `items` rows."""
    if kind == "table":
        head = "| # | name | status |\n|---|---|---|\n"
        return (
            "Here is every case:\n\n"
            + head
            + "".join(f"| {n} | case number {n} | passed |\n" for n in range(1, items + 1))
        )
    return "Here is every case:\n\n" + "".join(
        f"- item {n}: the case number {n} passed\n" for n in range(1, items + 1)
    )
