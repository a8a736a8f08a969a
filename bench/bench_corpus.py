"""How many tool calls mm-tui recovers from real model replies.

Each reply of the corpora in tests/agent/fixtures/ (the 30 malformed replies from servers' trackers,
the replies of many model families, the held-out set collected after the reader was built,
and the quoted and gathered replies collected later, some of which show calls
without meaning them) is replayed through the agent core against the scripted server over real HTTP, exactly as the corpus tests do. The figure is the
calls recovered (run with exactly the expected name and arguments) over the calls expected,
and the replies whose whole outcome (calls, visible text, the line a person sees) is exact.

Run `python -m bench.bench_corpus`; `python -m bench` includes it.
"""

from __future__ import annotations

import json
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import (
    Event,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    ToolFinished,
    ToolStarted,
    ToolStatus,
)
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.base import Tool, ToolContext, ToolKind, ToolResult
from mm_tui.agent.tools.registry import ToolRegistry
from scripted_server import Reply, ScriptedServer

FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "agent" / "fixtures"
WORLD = FIXTURES / "world_replies.yaml"
MALFORMED = FIXTURES / "malformed_replies.yaml"
HELDOUT = FIXTURES / "heldout_replies.yaml"
QUOTED = FIXTURES / "quoted_replies.yaml"
GATHERED = FIXTURES / "gathered_replies.yaml"


def world_cases() -> list[dict[str, Any]]:
    """The replies collected from many model families (world_replies.yaml)."""
    return yaml.safe_load(WORLD.read_text(encoding="utf-8"))["cases"]


def heldout_cases() -> list[dict[str, Any]]:
    """The held-out replies: collected from new sources after the reader was built,
    their outcomes written before the reader read them."""
    return yaml.safe_load(HELDOUT.read_text(encoding="utf-8"))["cases"]


def quoted_cases() -> list[dict[str, Any]]:
    """Real replies from new sources and replies that quote calls without meaning
    them (offered, illustrated, quoted, declined), outcomes written before the reader read them."""
    return yaml.safe_load(QUOTED.read_text(encoding="utf-8"))["cases"]


def gathered_cases() -> list[dict[str, Any]]:
    """Real replies from sources no other corpus used (parser tests, recorded replies,
    leaked calls), some showing calls without meaning them; outcomes written before the reader
    read them."""
    return yaml.safe_load(GATHERED.read_text(encoding="utf-8"))["cases"]


def malformed_cases() -> list[dict[str, Any]]:
    """The 30 malformed replies recorded from the trackers of four servers."""
    return yaml.safe_load(MALFORMED.read_text(encoding="utf-8"))


class RecordingTool(Tool):
    """A declared tool that remembers each run, in order; it answers "ok", or hands the call
    to a real tool (`inner`) so that tool's own checks and output stay part of the outcome."""

    kind = ToolKind.COMMAND
    fixed_description = "A tool of the recorded request."
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}}
    name = "recording"

    def __init__(self, name: str, runs: list[tuple[str, Any]], inner: Tool | None = None) -> None:
        self.name = name  # pyright: ignore[reportAttributeAccessIssue]  # one per declared name
        self.runs = runs
        self.inner = inner

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.runs.append((self.name, args))
        return self.inner.run(args, ctx) if self.inner is not None else ToolResult("ok")


@dataclass
class Outcome:
    """What a person would have seen of one replayed reply."""

    calls: list[tuple[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # notices and failed rows
    text: str = ""  # the visible text of the first assistant message
    crashed: str = ""


class _Sink:
    def __init__(self, answer: PermissionAnswer) -> None:
        self.events: list[Event] = []
        self.answer = answer
        self.lock = threading.Lock()

    def __call__(self, event: Event) -> None:
        with self.lock:
            self.events.append(event)
        if isinstance(event, PermissionRequest):
            event.future.set_result(self.answer)


def replay(
    reply: dict[str, Any], server: ScriptedServer, folder: Path, tools: list[Tool]
) -> Outcome:
    """Play one recorded reply to a fresh agent whose tools are `tools` (RecordingTools), and
    report what a person would have seen."""
    runs: list[tuple[str, Any]] = []
    for tool in tools:
        if isinstance(tool, RecordingTool):
            tool.runs = runs
    sink = _Sink(PermissionAnswer.ALLOW_ONCE)
    parsed = Reply.from_dict(reply)
    attempts = 4 if parsed.status and parsed.status >= 500 else 1  # 5xx are retried three times
    server.enqueue(*([parsed] * attempts), Reply(text="Understood."))
    agent = Agent(
        Config(base_url=server.base_url, model="scripted-model"),
        sink,
        folder,
        store=SessionStore(folder / "sessions"),
        registry=ToolRegistry.of(tools),
        request_timeout=10.0,
        retry_delays=(0.01, 0.01, 0.01),
    )
    outcome = Outcome()
    try:
        ended = agent.run_turn("do the task")
        if ended.reason == "error" and "internal error" in (ended.error or ""):
            outcome.crashed = ended.error or ""
    finally:
        agent.close()
    finished = {e.call_id: e for e in sink.events if isinstance(e, ToolFinished)}
    for event in sink.events:
        if isinstance(event, Notice) and event.level in ("error", "warning"):
            outcome.lines.append(event.text)
        if isinstance(event, ToolStarted):
            done = finished.get(event.call_id)
            if done is not None and done.status is ToolStatus.FAILED:
                outcome.lines.append(done.output)
    outcome.calls = runs
    first = next((m for m in agent.messages if m["role"] == "assistant"), None)
    outcome.text = ((first or {}).get("content") or "").strip()
    return outcome


def expected_calls(case: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(call["name"], call.get("arguments") or {}) for call in case.get("calls") or []]


def same_arguments(left: Any, right: Any) -> bool:
    """Exact equality of JSON values, with 1 and 1.0 kept apart from True."""
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


def judge(case: dict[str, Any], outcome: Outcome) -> tuple[int, int, bool]:
    """(calls recovered, calls expected, whole outcome exact) for one case."""
    expected = expected_calls(case)
    got = list(outcome.calls)
    recovered = 0
    for name, arguments in expected:
        match = next(
            (i for i, (n, a) in enumerate(got) if n == name and same_arguments(a, arguments)), None
        )
        if match is not None:
            recovered += 1
            got.pop(match)
    exact = (
        not outcome.crashed
        and len(outcome.calls) == len(expected)
        and all(
            n == en and same_arguments(a, ea)
            for (n, a), (en, ea) in zip(outcome.calls, expected, strict=True)
        )
    )
    if "text" in case:
        exact = exact and outcome.text == case["text"].strip()
    if "sees" in case:
        seen = outcome.lines + [outcome.text]
        exact = exact and case["sees"].strip() in [line.strip() for line in seen]
    return recovered, len(expected), exact


def case_tools(case: dict[str, Any]) -> list[Tool]:
    """A world case declares its request's tools; a malformed case plays against our real ones,
    which really run (harmless commands, a temporary folder)."""
    if "tools" in case:
        return [RecordingTool(name, []) for name in case["tools"]]
    from mm_tui.agent.tools.bash import BashTool
    from mm_tui.agent.tools.edit_file import EditFileTool
    from mm_tui.agent.tools.read_file import ReadFileTool
    from mm_tui.agent.tools.write_file import WriteFileTool

    real: list[Tool] = [BashTool(), ReadFileTool(), WriteFileTool(), EditFileTool()]
    return [RecordingTool(tool.name, [], inner=tool) for tool in real]


def replay_case(case: dict[str, Any], server: ScriptedServer, folder: Path) -> Outcome:
    return replay(case["reply"], server, folder, case_tools(case))


def measure(cases: list[dict[str, Any]]) -> tuple[int, int, int, list[str]]:
    """(calls recovered, calls expected, exact cases, ids not exact) over `cases`."""
    recovered = expected = exact = 0
    missed: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for number, case in enumerate(cases):
            folder = Path(tmp) / str(number)
            folder.mkdir()
            with ScriptedServer() as server:  # a fresh queue: no reply leaks into the next case
                got, want, whole = judge(case, replay_case(case, server, folder))
            recovered, expected = recovered + got, expected + want
            exact += whole
            if not whole:
                missed.append(case["id"])
    return recovered, expected, exact, missed


def corpora() -> list[tuple[str, list[dict[str, Any]]]]:
    return [
        ("world", world_cases()),
        ("held-out", heldout_cases()),
        ("malformed", malformed_cases()),
        ("quoted and new", quoted_cases()),
        ("gathered", gathered_cases()),
    ]


def run() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for label, cases in corpora():
        recovered, expected, exact, _ = measure(cases)
        rows.append(
            _row(f"{label} corpus: calls recovered / expected", recovered, expected, "calls")
        )
        rows.append(_row(f"{label} corpus: replies exactly right / replies", exact, len(cases)))
    return rows


def _row(name: str, value: int, baseline: int, unit: str = "replies") -> dict[str, Any]:
    return {
        "name": name,
        "value": float(value),
        "baseline": float(baseline),
        "unit": unit,
        "ratio": value / baseline if baseline else 0.0,
        "aim": "all",
        "met": value == baseline,
    }


if __name__ == "__main__":
    for label, cases in corpora():
        recovered, expected, exact, missed = measure(cases)
        print(f"{label}: calls {recovered}/{expected}, exact replies {exact}/{len(cases)}")
        for case_id in missed:
            print(f"  not exact: {case_id}")
