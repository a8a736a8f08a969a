"""The agent core's own cost, as ratios against the same work done without it.

- Streaming: a 4,000-token answer through `Agent.run_turn` (assembly, events, session writes)
  against bare clients reading the same stream from the same scripted server: the raw SSE
  read and json parse (the least any client does), and the openai SDK's typed stream.
- A runaway-sized tool call: 200 KB of arguments streamed through the core (runaway watch,
  assembly) against the same two baselines.
- Import: `import mm_tui.agent.agent` in a fresh interpreter against a bare `python -c pass`.

Run `python -m bench.bench_core`.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.measure import median_ms, print_rows, row
from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.scripted_server import Reply, ScriptedServer, ToolCall

REPEATS = 5
ANSWER_TOKENS = 4000
STREAM_NAME = "agent turn, 4,000-token streamed answer vs {baseline}"
TOOL_NAME = "agent turn, 200 KB tool-call arguments vs {baseline}"
BASELINES = {
    "raw": "the same SSE read raw and json-parsed",
    "typed": "the openai SDK's typed stream",
}
IMPORT_NAME = "import the agent core vs bare interpreter start"


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
    rows.append(bench_import())
    return rows


if __name__ == "__main__":
    print_rows(run())
