"""The agent core's own cost, as ratios against the same work done without it.

- Streaming: a 4,000-token answer through `Agent.run_turn` (assembly, events, session writes)
  against bare clients reading the same stream from the same scripted server: the raw SSE
  read and json parse (the least any client does), and the openai SDK's typed stream.
- A runaway-sized tool call: 200 KB of arguments streamed through the core (runaway watch,
  assembly) against the same two baselines.
- Paced streaming: the core alone, built as the window builds it
  (`window.ports.live_factory`, its sink a list append), running one turn of a 1,000-token
  answer at 50 and 200 tokens/s and at wire speed, against the floor of the window's bench
  (`bench_window_stream`: a bare client reading the same stream raw), both in fresh
  interpreters, alternated `PACED_ROUNDS` times on one server, medians of each, as the
  process's CPU seconds per 1,000 tokens. The core's client is built before the span, as the
  window builds it right after its first frame. Beside it, the CPU of the stream's reader
  thread alone (where the chunks are read, parsed and said; the turn's thread only waits for
  it). Reported, no aim: the aim of 0.7x the floor held while a hand-written transport read
  the stream at most every 50 ms (every 0.5 s in the window); on the `openai` client's own
  transport each token is read as it comes (docs/decisions/0001-http-transport.md).
- Import: `import mm_tui.agent.agent` in a fresh interpreter against a bare `python -c pass`.

Run `python -m bench.bench_core` (`python -m bench.bench_core paced` for the paced rows alone).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from bench.bench_window_stream import ROOT, TOKENS, _child, answer_markdown, scripted_server
from bench.measure import median_ms, print_rows, row
from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.registry import ToolRegistry
from scripted_server import Reply, ScriptedServer, ToolCall

REPEATS = 5
ANSWER_TOKENS = 4000
STREAM_NAME = "agent turn, 4,000-token streamed answer vs {baseline}"
TOOL_NAME = "agent turn, 200 KB tool-call arguments vs {baseline}"
BASELINES = {
    "raw": "the same SSE read raw and json-parsed",
    "typed": "the openai SDK's typed stream",
}
IMPORT_NAME = "import the agent core vs bare interpreter start"
PACED_RATES = (50, 200, 0)
PACED_NAME = "core alone, streaming {label}: CPU s per 1,000 tokens vs bare SSE read"
READER_NAME = "core's stream reader thread alone, {label}: CPU s per 1,000 tokens vs bare SSE read"
PACED_ROUNDS = 3
READER_THREAD = "mm-model-stream"  # model_client.ModelClient.stream's reader


def answer_text() -> str:
    words = ["mm-tui", "streams", "**Markdown**", "`code`", "tokens", "quickly", "and", "well"]
    return " ".join(
        words[i % len(words)] + ("\n" if i % 12 == 11 else "") for i in range(ANSWER_TOKENS)
    )


def bench_stream(server: ScriptedServer, reply: Reply, name: str, folder: Path) -> list[dict]:
    """The agent's turn against two bare clients of the same stream: the raw read (the least
    any client does) and the SDK's typed stream (what most agents use)."""
    import json

    import openai

    client = openai.OpenAI(base_url=server.base_url, api_key="x", max_retries=0)
    request = {"model": "m", "messages": [{"role": "user", "content": "go"}], "stream": True}

    def raw() -> None:
        server.enqueue(reply)
        with client.chat.completions.with_streaming_response.create(**request) as response:
            for line in response.iter_lines():
                if line.startswith("data: {"):
                    json.loads(line[6:])

    def typed() -> None:
        server.enqueue(reply)
        for _ in client.chat.completions.create(**request):
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

    value = median_ms(through_agent, REPEATS)
    return [
        row(name.format(baseline=BASELINES["raw"]), value, median_ms(raw, REPEATS)),
        row(name.format(baseline=BASELINES["typed"]), value, median_ms(typed, REPEATS)),
    ]


def bench_import() -> dict:
    def start(code: str) -> Callable[[], object]:
        return lambda: subprocess.run([sys.executable, "-c", code], check=True)

    value = median_ms(start("import mm_tui.agent.agent"), 5)
    baseline = median_ms(start("pass"), 5)
    return row(IMPORT_NAME, value, baseline)


def child_core_stream(base_url: str) -> dict[str, float]:
    """One turn through the core as the window builds it, in this fresh interpreter: the
    process's CPU over the turn, and each thread's own (`time.thread_time` at its end)."""
    from mm_tui.window.ports import live_factory

    config = Config(base_url=base_url, model="bench-model", lsp_servers=(), permissions="allow")
    events: list[object] = []
    agent = live_factory(config, Path.cwd())(events.append)  # builds the client, as the window
    assert isinstance(agent, Agent)
    threads: dict[str, float] = {}
    run_thread = threading.Thread.run

    def timed_run(thread: threading.Thread) -> None:
        try:
            run_thread(thread)
        finally:
            threads[thread.name] = threads.get(thread.name, 0.0) + time.thread_time()

    threading.Thread.run = timed_run  # pyright: ignore[reportAttributeAccessIssue]  # a probe
    cpu, wall, turn = time.process_time(), time.perf_counter(), time.thread_time()
    ended = agent.run_turn("go")
    result = {
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "turn_thread": time.thread_time() - turn,
        "reader_thread": threads.get(READER_THREAD, float("nan")),
        "events": len(events),
    }
    if ended.reason != "answered" or len(agent.messages[-1]["content"]) < TOKENS * 4 - 8:
        raise RuntimeError(f"the turn did not read the whole answer: {ended}")
    return result


def _core_child(base_url: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_DATA_HOME": home, "XDG_STATE_HOME": home, "MM_DEBUG": "",
               "PYTHONPATH": str(ROOT)}  # fmt: skip
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_core", "core-stream", base_url],
            capture_output=True, text=True, env=env, cwd=home,
        )  # fmt: skip
    lines = output.stdout.strip().splitlines()
    if output.returncode or not lines:
        print(f"bench child core-stream failed: {output.stderr[-3000:]}", file=sys.stderr)
        return defaultdict(lambda: float("nan"))
    print(f"bench child core-stream: {lines[-1]}", file=sys.stderr, flush=True)
    return defaultdict(lambda: float("nan"), json.loads(lines[-1]))


def bench_paced(rates: tuple[int, ...] = PACED_RATES, rounds: int = PACED_ROUNDS) -> list[dict]:
    """The core alone against the bare read of the same paced stream, same server, same run:
    `rounds` alternated pairs (the machine is shared), the median of each."""
    rows = []
    text = answer_markdown()
    for rate in rates:
        reply = {"text": text, "chunk_size": 4, "delay": 1 / rate if rate else 0.0}
        bare: list[dict[str, float]] = []
        core: list[dict[str, float]] = []
        with scripted_server([reply] * (2 * rounds)) as base_url:
            for _ in range(rounds):
                bare.append(_child("bare-stream", base_url))
                core.append(_core_child(base_url))
        per = 1000 / TOKENS
        floor = _median(bare, "cpu") * per
        label = f"at {rate} tokens/s" if rate else "at wire speed"
        rows.append(
            row(PACED_NAME.format(label=label), _median(core, "cpu") * per, floor, unit="s")
        )  # fmt: skip
        if rate:
            rows.append(
                row(READER_NAME.format(label=label), _median(core, "reader_thread") * per,
                    floor, unit="s")
            )  # fmt: skip
    return rows


def _median(runs: list[dict[str, float]], key: str) -> float:
    values = [run[key] for run in runs if run[key] == run[key]]  # NaN: a child that failed
    return statistics.median(values) if values else float("nan")


def run() -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as name, ScriptedServer() as server:
        folder = Path(name)
        text_reply = Reply(text=answer_text(), chunk_size=4)
        rows += bench_stream(server, text_reply, STREAM_NAME, folder)
        arguments = {"text": "".join(f"line {i}: payload\n" for i in range(11_000))}
        tool_reply = Reply(
            tool_calls=[ToolCall("nothing", arguments)], finish_reason="stop", chunk_size=16
        )
        rows += bench_stream(server, tool_reply, TOOL_NAME, folder)
    rows += bench_paced()
    rows.append(bench_import())
    return rows


if __name__ == "__main__":
    if sys.argv[1:2] == ["core-stream"]:
        print(json.dumps(child_core_stream(sys.argv[2])), flush=True)
        os._exit(0)  # do not wait for the Agent's threads
    print_rows(bench_paced() if sys.argv[1:2] == ["paced"] else run())
