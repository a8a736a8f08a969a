"""Every malformed reply recorded from the trackers of Ollama, llama.cpp, vLLM and LM Studio
(tests/agent/fixtures/malformed_replies.yaml) ends in a working tool call or a clear tool
result or notice — never a crash or a silent stop (issue 6)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from mm_tui.agent.events import Notice, PermissionAnswer, ToolFinished, ToolStarted, ToolStatus
from mm_tui.agent.tools.bash import BashTool
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.read_file import ReadFileTool
from mm_tui.agent.tools.write_file import WriteFileTool
from mm_tui.scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory, assert_valid_history

CORPUS = yaml.safe_load((Path(__file__).parent / "fixtures/malformed_replies.yaml").read_text())
PARSE_FAILURES = ("not valid JSON", "there is no tool named")


def subset(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    return all(actual.get(key) == value for key, value in expected.items())


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_recorded_malformed_reply_ends_in_a_call_or_a_clear_line(
    case: dict[str, Any], make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    reply = Reply.from_dict(case["reply"])
    attempts = 4 if reply.status and reply.status >= 500 else 1  # 5xx are retried three times
    model_server.enqueue(*([reply] * attempts))
    model_server.enqueue(Reply(text="Understood."))
    tools = [BashTool(), ReadFileTool(), WriteFileTool(), EditFileTool()]
    # Nothing that asks is allowed to run: a parsed call shows as a rejected row.
    agent, events = make_agent(tools=tools, answer=PermissionAnswer.REJECT)

    ended = agent.run_turn("do the task")

    assert "internal error" not in (ended.error or "")
    started, finished = events.of(ToolStarted), events.of(ToolFinished)
    assert_valid_history(agent.messages)
    if case["expect"] == "call":
        assert started, f"no tool call was recovered; turn ended {ended}"
        first = started[0]
        assert (
            first.name.lower() == case["expect_tool"]
            or agent.registry.resolve(first.name).name == case["expect_tool"]
        )
        assert subset(case.get("expect_arguments") or {}, first.arguments), first.arguments
        assert not any(p in finished[0].output for p in PARSE_FAILURES), finished[0].output
        assert finished[0].status in (ToolStatus.DONE, ToolStatus.REJECTED, ToolStatus.FAILED)
    else:
        clear_lines = [n.text for n in events.of(Notice) if n.level in ("error", "warning")]
        failed_rows = [f.output for f in finished if f.status is ToolStatus.FAILED]
        assert clear_lines or failed_rows, f"silent: {ended}, {agent.messages[-1]}"
        for text in clear_lines + failed_rows:
            assert text.strip() and "Traceback" not in text
