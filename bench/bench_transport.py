"""The model transport's cost: the `openai` client and its own httpx transport under the core.

- Per request, as the history grows: the client CPU of one streamed request (the request sent
  as the SDK sends it, a two-chunk answer read) with 400 messages of history against the same
  with 40, medians of `REQUEST_REPEATS` alternated requests, the server in its own process.
  Aim: at most 1.2x (the request's own cost, not a walk of the history). Beside it, for the
  record, the SDK's `chat.completions.create` on the same requests: it walks every value of
  the history (`maybe_transform`) on every request.
- Per 1,000 streamed tokens: the core alone (`bench_core.child_core_stream`, built as the
  window builds it) against a bare SSE read through the same `openai` client and transport
  (POST, read the lines, parse each chunk's JSON), both in fresh interpreters, alternated
  `STREAM_ROUNDS` times, at 50 tokens/s and at wire speed. Reported, no aim.

Run `python -m bench.bench_transport`, or `python -m bench --only transport`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from typing import Any

from bench.bench_core import _core_child, _median
from bench.bench_window_stream import ROOT, TOKENS, answer_markdown, scripted_server
from bench.measure import print_rows, row

HISTORY_SIZES = (40, 400)
REQUEST_REPEATS = 40
STREAM_RATES = (50, 0)
STREAM_ROUNDS = 3
REQUEST_AIM = 1.2
REQUEST_NAME = "one streamed request, client CPU: {big} messages of history vs {small}"
SDK_NAME = (
    "the same through the SDK's chat.completions.create (walks the history): {big} vs {small}"
)
STREAM_NAME = "core alone, streaming {label}: CPU s per 1,000 tokens vs bare SSE read, both on the openai client"


def history(size: int) -> list[dict[str, Any]]:
    """`size` messages as a session holds them: a system prompt, then turns of a request, a
    tool call, its output and an answer, each a few hundred characters."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are mm. " * 40}]
    n = 0
    while len(messages) < size:
        n += 1
        messages += [
            {"role": "user", "content": f"Step {n}: read the configuration and check it. " * 4},
            {"role": "assistant", "content": "", "tool_calls": [{
                "id": f"call_{n}", "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"src/m{n}.py"})},
            }]},  # fmt: skip
            {"role": "tool", "tool_call_id": f"call_{n}", "content": f"def f{n}():\n    return {n}\n" * 8},
            {"role": "assistant", "content": f"The module m{n} returns {n}; nothing to change. " * 3},
        ]  # fmt: skip
    return messages[:size]


def bench_requests() -> list[dict]:
    """Client CPU of one request at each history size, mm-tui's road and the SDK's."""
    from mm_tui.agent.model_client import ModelClient
    from mm_tui.agent.turn_signals import CancelFlag

    requests = {
        size: {"model": "bench-model", "messages": history(size), "stream_options": {"include_usage": True}}
        for size in HISTORY_SIZES
    }  # fmt: skip
    count = (REQUEST_REPEATS + 1) * len(HISTORY_SIZES) * 2
    reply = {"text": "ok, done.", "chunk_size": 4}
    ours: dict[int, list[float]] = {size: [] for size in HISTORY_SIZES}
    sdks: dict[int, list[float]] = {size: [] for size in HISTORY_SIZES}
    with scripted_server([reply] * count) as base_url:
        client = ModelClient(base_url, "x", timeout=60)
        sdk = client.client

        def through_ours(request: dict[str, Any]) -> None:
            client.stream(request, CancelFlag(), lambda chunks: False)

        def through_sdk(request: dict[str, Any]) -> None:
            for _ in sdk.chat.completions.create(**request, stream=True):
                pass

        for repeat in range(REQUEST_REPEATS + 1):
            for size, request in requests.items():
                for road, spent in ((through_ours, ours), (through_sdk, sdks)):
                    cpu = time.process_time()
                    road(request)
                    if repeat:  # the first round warms up
                        spent[size].append((time.process_time() - cpu) * 1000)
    small, big = HISTORY_SIZES
    mine = [statistics.median(ours[size]) for size in HISTORY_SIZES]
    theirs = [statistics.median(sdks[size]) for size in HISTORY_SIZES]
    return [
        row(REQUEST_NAME.format(big=big, small=small), mine[1], mine[0], max_ratio=REQUEST_AIM),
        row(SDK_NAME.format(big=big, small=small), theirs[1], theirs[0]),
    ]


def child_bare_openai_stream(base_url: str) -> dict[str, float]:
    """The least a client does on the `openai` client's transport: POST through the SDK, read
    the SSE lines, parse each chunk's JSON."""
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0)
    client.platform_headers()  # as the core's client is built before its span
    _ = client.chat.completions
    request = {"model": "bench-model", "messages": [{"role": "user", "content": "go"}]}
    cpu, wall, chunks = time.process_time(), time.perf_counter(), 0
    with client.chat.completions.with_streaming_response.create(**request, stream=True) as r:
        for line in r.iter_lines():
            if line.startswith("data: {"):
                json.loads(line[6:])
                chunks += 1
    return {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall, "chunks": chunks}


def _bare_child(base_url: str) -> dict[str, float]:
    """`child_bare_openai_stream` in a fresh interpreter, in a scratch folder."""
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "XDG_DATA_HOME": home, "XDG_STATE_HOME": home, "MM_DEBUG": "",
               "PYTHONPATH": str(ROOT)}  # fmt: skip
        output = subprocess.run(
            [sys.executable, "-m", "bench.bench_transport", "bare-openai-stream", base_url],
            capture_output=True, text=True, env=env, cwd=home,
        )  # fmt: skip
    lines = output.stdout.strip().splitlines()
    if output.returncode or not lines:
        print(f"bench child bare-openai-stream failed: {output.stderr[-3000:]}", file=sys.stderr)
        return defaultdict(lambda: float("nan"))
    print(f"bench child bare-openai-stream: {lines[-1]}", file=sys.stderr, flush=True)
    return defaultdict(lambda: float("nan"), json.loads(lines[-1]))


def bench_streaming() -> list[dict]:
    rows = []
    text = answer_markdown()
    for rate in STREAM_RATES:
        reply = {"text": text, "chunk_size": 4, "delay": 1 / rate if rate else 0.0}
        bare: list[dict[str, float]] = []
        core: list[dict[str, float]] = []
        with scripted_server([reply] * (2 * STREAM_ROUNDS)) as base_url:
            for _ in range(STREAM_ROUNDS):
                bare.append(_bare_child(base_url))
                core.append(_core_child(base_url))
        per = 1000 / TOKENS
        label = f"at {rate} tokens/s" if rate else "at wire speed"
        rows.append(
            row(STREAM_NAME.format(label=label), _median(core, "cpu") * per,
                _median(bare, "cpu") * per, unit="s")
        )  # fmt: skip
    return rows


def run() -> list[dict]:
    return bench_requests() + bench_streaming()


if __name__ == "__main__":
    if sys.argv[1:2] == ["bare-openai-stream"]:
        print(json.dumps(child_bare_openai_stream(sys.argv[2])), flush=True)
        sys.exit(0)
    print_rows(run())
