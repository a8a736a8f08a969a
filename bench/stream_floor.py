"""The floor under the window while it streams: bare Textual, the window's screen, no mm-tui.

What the least a Textual window costs for the 20 s that 1,000 tokens take at 50 tokens/s,
measured the way `bench_window_stream` measures the window (headless `run_test` at the same
size, the process's CPU seconds over the span):

- `idle`: the screen (a top line, a followed transcript of text lines, a status line, a
  `TextArea` prompt with its blinking cursor, a footer) with nothing moving;
- `spinner`: the same with a one-cell spinner turning 10 times a second;
- `lines`: the same with the spinner, the transcript's last line changing on every spinner
  frame and a new line at its bottom every 0.4 s, the view following it. The transcript is a
  Line-API widget (`ScrollView` + `render_line`, each line's `Strip` made once), the least
  Textual work for a growing text: a gain of a line sets its `virtual_size` (a layout) and
  scrolls the view (a repaint of every visible line: Textual has no terminal scroll regions);
  a change of the last line is `refresh_lines` of that line alone.

- `tail`: what a line-gated window can come down to: no spinner, the prompt's cursor still (as
  the window's while text flows), and in place of the transcript a plain widget that draws the
  tail of its lines itself (`render_line` reads the line `height - y` from the end, each line's
  `Strip` made once), gaining a line every 0.4 s by a repaint of itself: no scroll, no layout.

If the window costs little more than `lines`, what is left is Textual's own.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

SECONDS = 20.0
TICK = 0.1
GROW_EVERY = 0.4
LINE = "The function `step_{n}` reads the configuration once and checks every value it needs "


def floor_app_class(mode: str) -> Any:
    from rich.segment import Segment
    from textual.app import App, ComposeResult
    from textual.containers import Horizontal
    from textual.geometry import Size
    from textual.scroll_view import ScrollView
    from textual.strip import Strip
    from textual.widget import Widget
    from textual.widgets import Footer, Static, TextArea

    class Lines(ScrollView):
        """A followed column of text lines, each line's Strip made once."""

        def __init__(self) -> None:
            super().__init__(id="transcript")
            self.lines: list[str] = [LINE.format(n=n) for n in range(60)]
            self.strips: dict[int, Strip] = {}

        def on_mount(self) -> None:
            self.virtual_size = Size(0, len(self.lines))
            self.scroll_end(animate=False)

        def render_line(self, y: int) -> Strip:
            index = round(self.scroll_y) + y
            strip = self.strips.get(index)
            if strip is None:
                text = self.lines[index] if index < len(self.lines) else ""
                strip = Strip.blank(self.size.width)
                if text:
                    strip = Strip([Segment(text)]).extend_cell_length(self.size.width)
                self.strips[index] = strip
            return strip

        def change_last(self, n: int) -> None:
            self.lines[-1] = LINE.format(n=n)[: 20 + n % 60]
            self.strips.pop(len(self.lines) - 1, None)
            self.refresh_lines(len(self.lines) - 1)

        def gain(self) -> None:
            self.lines.append("")
            self.virtual_size = Size(0, len(self.lines))
            self.scroll_end(animate=False, immediate=False)

    class Tail(Widget):
        """A followed column of text lines drawn from its end, each line's Strip made once."""

        DEFAULT_CSS = "Tail { height: 1fr; padding: 0 1; }"

        def __init__(self) -> None:
            super().__init__(id="transcript")
            self.lines: list[str] = [LINE.format(n=n) for n in range(60)]
            self.strips: dict[int, Strip] = {}

        def render_line(self, y: int) -> Strip:
            index = len(self.lines) - self.size.height + y
            strip = self.strips.get(index)
            if strip is None:
                strip = Strip.blank(self.size.width)
                if 0 <= index < len(self.lines):
                    strip = Strip([Segment(self.lines[index])]).extend_cell_length(self.size.width)
                self.strips[index] = strip
            return strip

        def gain(self) -> None:
            self.lines.append(LINE.format(n=len(self.lines)))
            self.refresh()

    class Spinner(Widget):
        DEFAULT_CSS = "Spinner { width: 1; height: 1; }"
        frame = 0

        def render(self) -> str:
            return "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"[self.frame % 10]

    class FloorWindow(App[None]):
        CSS = """
        #top, #status { height: 1; padding: 0 1; }
        #transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
        #status-row { height: 1; }
        TextArea { height: auto; min-height: 3; max-height: 10; border: round $primary; }
        """

        def compose(self) -> ComposeResult:
            yield Static("bench-model · 127.0.0.1 · ~/project", id="top")
            yield Tail() if mode == "tail" else Lines()
            with Horizontal(id="status-row"):
                yield Spinner()
                yield Static(" Waiting for the model", id="status")
            yield TextArea(id="prompt")
            yield Footer()

        def on_mount(self) -> None:
            self.query_one(TextArea).focus()
            self.ticks = 0
            if mode == "tail":
                self.query_one(TextArea).cursor_blink = False
                self.set_interval(GROW_EVERY, self.query_one(Tail).gain)
            elif mode != "idle":
                self.set_interval(TICK, self.tick)

        def tick(self) -> None:
            self.ticks += 1
            spinner = self.query_one(Spinner)
            spinner.frame = self.ticks
            spinner.refresh()
            if mode == "lines":
                lines = self.query_one(Lines)
                if self.ticks % round(GROW_EVERY / TICK) == 0:
                    lines.gain()
                lines.change_last(self.ticks)

    return FloorWindow


def child_floor(mode: str, seconds: float = SECONDS) -> dict[str, float]:
    """CPU seconds of bare Textual over `seconds` in `mode`, and frames drawn a second."""
    from bench.window_harness import SIZE, frame_timed

    timed = frame_timed(floor_app_class(mode))()
    result: dict[str, float] = {}

    async def measure() -> None:
        async with timed.run_test(size=SIZE) as pilot:
            await pilot.pause(0.5)
            frames = len(timed.frames)
            cpu, wall = time.process_time(), time.perf_counter()
            await asyncio.sleep(seconds)
            result["cpu"] = time.process_time() - cpu
            result["wall"] = time.perf_counter() - wall
            result["fps"] = (len(timed.frames) - frames) / result["wall"]
            await pilot.exit(None)

    asyncio.run(measure())
    return result
