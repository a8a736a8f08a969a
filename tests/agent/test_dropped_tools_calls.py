"""A server that takes `tools` and silently drops them (llama-server without a tool-capable
chat template): its prompt count matches the conversation without the tools; mm-tui
says it once and switches to the text protocol (toolCalls: auto)."""

from __future__ import annotations

import json

from mm_tui.agent.context import estimate_tokens, truncation_warning
from mm_tui.agent.events import Notice, ToolFinished
from mm_tui.agent.model_call import TOOLS_DROPPED_NATIVE
from mm_tui.agent.text_calls import tools_ignored
from mm_tui.agent.tools.bash import BashTool
from mm_tui.agent.tools.edit_file import EditFileTool
from mm_tui.agent.tools.read_file import ReadFileTool
from mm_tui.agent.tools.write_file import WriteFileTool
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory

TOOLS = [BashTool(), ReadFileTool(), WriteFileTool(), EditFileTool()]


def without_tools_tokens(request: dict) -> int:
    return len(json.dumps(request["messages"], ensure_ascii=False)) // 4


def test_a_prompt_counted_without_the_tools_switches_to_text_once(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    call = '<tool_call>{"name": "bash", "arguments": {"command": "echo hi"}}</tool_call>'
    agent, events = make_agent(tools=TOOLS)
    before = agent.model_call.request("scripted-model")  # what the turn will send, less its
    sent = {"messages": [*before["messages"], {"role": "user", "content": "say hi"}]}  # prompt
    counted = without_tools_tokens(sent)
    usage = {"prompt_tokens": counted, "completion_tokens": 5}
    model_server.enqueue(Reply(text=call, usage=usage), Reply(text="Done."))

    agent.run_turn("say hi")

    requests = model_server.requests
    assert "tools" in requests[0] and "tools" not in requests[1]
    warnings = [n.text for n in events.of(Notice) if "seems to ignore them" in n.text]
    assert len(warnings) == 1
    assert events.of(ToolFinished)[0].output.strip() == "hi"


def test_the_rule_needs_a_count_near_the_conversation_alone() -> None:
    request = {
        "messages": [{"role": "user", "content": "x" * 4000}],
        "tools": [t.schema() for t in TOOLS],
    }
    alone = without_tools_tokens(request)
    with_tools = alone + len(json.dumps(request["tools"])) // 4
    assert tools_ignored(request, alone)
    assert not tools_ignored(request, with_tools)  # rendered: no notice
    assert not tools_ignored(request, alone // 4)  # cut: the truncation warning's business
    assert not tools_ignored({"messages": request["messages"], "tools": []}, alone)


def test_in_native_mode_dropped_tools_are_said_once_instead_of_a_truncation_warning(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    """What the real llama-server check found with SmolLM2's template: the short count was
    taken for a cut conversation; it is the tools that were dropped."""
    agent, events = make_agent(tools=TOOLS, tool_calls="native", context_window=4096)
    prompt = "say hi " + "please " * 150
    before = agent.model_call.request("scripted-model")
    sent = {**before, "messages": [*before["messages"], {"role": "user", "content": prompt}]}
    counted = without_tools_tokens(sent)
    assert truncation_warning(estimate_tokens(sent), counted, 4096)  # what used to be said
    usage = {"prompt_tokens": counted, "completion_tokens": 5}
    model_server.enqueue(Reply(text="Hi.", usage=usage))

    agent.run_turn(prompt)

    warnings = [n.text for n in events.of(Notice) if n.level == "warning"]
    assert warnings == [TOOLS_DROPPED_NATIVE.format(counted)]
    assert "tools" in model_server.requests[0]  # still native: the person chose it
