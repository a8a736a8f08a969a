"""The constrained retry against a real llama-server (`python -m bench.real_model
--constrained`): mm-tui's own `ConstrainedRetry` asks the server again, under the call's
schema as a grammar, for calls whose arguments no repair reads, as it does in a turn.

The unreadable call is written here: the tiny model of the check never writes a call of its
own (bench/RESULTS.md, "A real model server"), so a reply that holds one cannot be waited
for. Everything after it is real: the server kind read from the server, the request mm-tui
builds (its system prompt, its five tools, described in the prompt for this request), the
server's grammar, the model's answer under it, and mm-tui reading that answer.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

#: (tool, what the person asks, the arguments as a model broke them: no repair reads them)
CASES = (
    ("bash", "Use the bash tool to run the command ls.", '{"command" "ls" :: ]]'),
    ("read_file", "Read the file notes.txt.", '{"path" "notes.txt" :: ]]'),
    ("write_file", "Write hello into the file hello.txt.", '{"path" hello.txt, "content" ]]'),
    ("edit_file", "In notes.txt, replace old with new.", '{"path" "notes.txt", "edits" [{old}]]'),
    ("lsp", "Where is the function main defined in main.py?", '{"action" definition :: ]]'),
)


class _Kept(logging.Handler):
    """The constrained retry's debug lines: what the server answered when it did not read."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if "not read" in record.msg or "free text" in record.msg:
            self.lines.append(record.getMessage())


def check(base_url: str, rounds: int, folder: Path, tools: str = "") -> dict[str, Any]:
    """Each case (of `tools`, comma-separated; all when empty) `rounds` times with a fresh
    ConstrainedRetry; what the server and the model did each time."""
    from mm_tui.agent.config import Config
    from mm_tui.agent.constrained_retry import ConstrainedRetry
    from mm_tui.agent.model_client import ModelClient
    from mm_tui.agent.prompts import BUILTIN_SYSTEM_PROMPT
    from mm_tui.agent.repair import parse_arguments
    from mm_tui.agent.server_kind import detect_server
    from mm_tui.agent.stream import AssembledCall
    from mm_tui.agent.tools.registry import build_registry
    from mm_tui.agent.turn_signals import TurnSignals

    registry = build_registry(Config(base_url=base_url, model="smollm2"), folder)
    client = ModelClient(base_url, "none", timeout=300)
    said: list[str] = []
    signals = TurnSignals(lambda event: said.append(repr(event)))
    report: dict[str, Any] = {"server kind": str(detect_server(base_url))}
    runs: list[dict[str, Any]] = []
    kept = _Kept()
    logger = logging.getLogger("mm_tui.agent.constrained_retry")
    logger.addHandler(kept)
    logger.setLevel(logging.DEBUG)
    for name, prompt, broken in CASES:
        if tools and name not in tools.split(","):
            continue
        for number in range(rounds):
            messages = [
                {"role": "system", "content": BUILTIN_SYSTEM_PROMPT.format(cwd=folder)},
                {"role": "user", "content": prompt},
            ]
            request = {"model": "smollm2", "messages": messages, "tools": registry.schemas(),
                       "stream_options": {"include_usage": True}}  # fmt: skip
            calls = [AssembledCall(f"call_{number}", name, broken, 0)]
            retry = ConstrainedRetry(base_url)
            started = time.monotonic()
            kept.lines.clear()
            outcome = retry.mend(client, signals, request, calls, registry)
            seconds = round(time.monotonic() - started, 1)
            after = calls[0]
            tool = registry.resolve(after.name)
            parsed = parse_arguments(after.arguments, tool.parameters if tool else None)
            runs.append({
                "tool": name, "round": number + 1, "seconds": seconds,
                "server took the grammar": retry.supported,
                "notice": outcome.notice, "usage (prompt, completion)": outcome.usage,
                "badge": after.badge, "call": {"name": after.name, "arguments": after.arguments},
                "reads as a call": bool(after.badge) and parsed.arguments is not None,
                "answer not read": kept.lines[:1],
            })  # fmt: skip
            print(json.dumps(runs[-1], ensure_ascii=False)[:300], file=sys.stderr, flush=True)
    logger.removeHandler(kept)
    report["runs"] = runs
    readable = sum(run["reads as a call"] for run in runs)
    report["readable calls"] = f"{readable} of {len(runs)}"
    return report


def summary(report: dict[str, Any]) -> str:
    """One line a run: what RESULTS.md tabulates."""
    lines = [f"server kind: {report['server kind']}; readable: {report['readable calls']}"]
    for run in report["runs"]:
        arguments = json.dumps(run["call"]["arguments"], ensure_ascii=False)[:120]
        lines.append(f"{run['tool']} #{run['round']}: {run['seconds']} s, "
                     f"{run['usage (prompt, completion)']}, {run['notice'] or '-'}; "
                     f"{run['call']['name']} {arguments}")  # fmt: skip
    return "\n".join(lines)
