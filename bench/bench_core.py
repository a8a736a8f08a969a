"""The agent core's own cost, as ratios against the same work done without it.

- Streaming: a 4,000-token answer through `Agent.run_turn` (assembly, events, session writes)
  against the bare `openai` client reading the same stream from the same scripted server.
- A runaway-sized tool call: 200 KB of arguments streamed through the core (runaway watch,
  assembly) against the bare client.
- Import: `import mm_tui.agent.agent` in a fresh interpreter against a bare `python -c pass`.

Run `python -m bench.bench_core`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.scripted_server import Reply, ScriptedServer, ToolCall

REPEATS = 5
ANSWER_TOKENS = 4000
STREAM_NAME = "agent turn, 4,000-token streamed answer vs bare openai client"
TOOL_NAME = "agent turn, 200 KB tool-call arguments vs bare openai client"
IMPORT_NAME = "import the agent core vs bare interpreter start"


def median_ms(action: Callable[[], object], repeats: int = REPEATS) -> float:
    action()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def row(name: str, value: float, baseline: float, target: float | None = None) -> dict:
    result = {
        "name": name,
        "value": round(value, 2),
        "baseline": round(baseline, 2),
        "ratio": round(value / baseline, 2) if baseline else float("inf"),
        "unit": "ms",
    }
    if target is not None:
        result["target"] = target
    return result


def answer_text() -> str:
    words = ["mm-tui", "streams", "**Markdown**", "`code`", "tokens", "quickly", "and", "well"]
    return " ".join(
        words[i % len(words)] + ("\n" if i % 12 == 11 else "") for i in range(ANSWER_TOKENS)
    )


def bench_stream(server: ScriptedServer, reply: Reply, name: str, folder: Path) -> dict:
    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)

    def bare() -> None:
        server.enqueue(reply)
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "go"}], stream=True
        )
        for _ in stream:
            pass

    def through_agent() -> None:
        server.enqueue(reply)
        agent = Agent(
            Config(base_url=server.base_url, model="m", context_window=10**6),
            lambda event: None,
            folder,
            store=SessionStore(folder / "sessions"),
            registry=ToolRegistry(),
        )
        agent.run_turn("go")

    return row(name, median_ms(through_agent), median_ms(bare))


def bench_import() -> dict:
    def start(code: str) -> Callable[[], object]:
        return lambda: subprocess.run([sys.executable, "-c", code], check=True)

    value = median_ms(start("import mm_tui.agent.agent"), 5)
    baseline = median_ms(start("pass"), 5)
    return row(IMPORT_NAME, value, baseline)


def run() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as name, ScriptedServer() as server:
        folder = Path(name)
        text_reply = Reply(text=answer_text(), chunk_size=4)
        rows.append(bench_stream(server, text_reply, STREAM_NAME, folder))
        arguments = {"text": "".join(f"line {i}: payload\n" for i in range(11_000))}
        tool_reply = Reply(
            tool_calls=[ToolCall("nothing", arguments)], finish_reason="stop", chunk_size=16
        )
        rows.append(bench_stream(server, tool_reply, TOOL_NAME, folder))
    rows.append(bench_import())
    return rows


if __name__ == "__main__":
    for r in run():
        print(f"{r['name']}: {r['value']} ms vs {r['baseline']} ms ({r['ratio']}x)")
