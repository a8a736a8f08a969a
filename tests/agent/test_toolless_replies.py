"""A model that answers as if it had no tools while tools were sent (a server or chat template
that drops them) is noticed: the person is told once per session, with the setting that helps
on that server, and nothing is switched. Replies come from `fixtures/toolless_replies.yaml`
(collected from public trackers, with their sources), over the scripted server's real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mm_tui.agent.events import Notice
from mm_tui.agent.toolless_reply import toolless_sign
from mm_tui.agent.tools.bash import BashTool
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory

CASES = yaml.safe_load(
    (Path(__file__).parent / "fixtures" / "toolless_replies.yaml").read_text(encoding="utf-8")
)
REFUSAL = "I don't have the ability to access your filesystem. Try `ls -la` yourself."


def warnings(events: object) -> list[str]:
    return [n.text for n in events.of(Notice) if n.level == "warning"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("case", CASES["notice"], ids=[c["id"] for c in CASES["notice"]])
def test_every_collected_toolless_reply_is_recognised(case: dict) -> None:
    assert case["source"] and case["provenance"] in ("verbatim", "reported", "constructed")
    assert toolless_sign(case["text"]) is not None, case["text"]


@pytest.mark.parametrize("case", CASES["quiet"], ids=[c["id"] for c in CASES["quiet"]])
def test_an_ordinary_answer_is_not_taken_for_one(case: dict) -> None:
    assert toolless_sign(case["text"]) is None, case["text"]


@pytest.mark.parametrize(
    ("dialect", "fix"),
    [
        ("llamacpp", "start llama-server with --jinja"),
        ("ollama", "use a model whose `ollama show` lists tools"),
        ("vllm", "start vLLM with --enable-auto-tool-choice"),
        ("openai", "enable tool calling on the server"),
    ],
)
def test_a_refusal_while_tools_were_sent_is_said_once_with_the_servers_fix(
    make_agent: AgentFactory, model_server: ScriptedServer, dialect: str, fix: str
) -> None:
    model_server.dialect = dialect
    agent, events = make_agent(tools=[BashTool()], tool_calls="native")
    model_server.enqueue(Reply(text=REFUSAL), Reply(text=REFUSAL))
    agent.run_turn("list the files")
    agent.run_turn("please list them")
    [line] = warnings(events)
    assert line.startswith(
        "the model answered as if it had no tools (\"I don't have the ability to access your "
        'filesystem") — the server or its chat template seems to ignore them: '
    )
    assert fix in line and line.endswith("or set toolCalls: text to describe them in the prompt")
    assert all("tools" in r for r in model_server.requests)  # told, never switched


def test_a_shell_block_handed_to_the_person_is_noticed(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    [handoff] = [c for c in CASES["notice"] if c["id"] == "qwen-handoff-paste-output"]
    agent, events = make_agent(tools=[BashTool()], tool_calls="native")
    model_server.enqueue(Reply(text=handoff["text"]))
    agent.run_turn("what is in src?")
    [line] = warnings(events)
    assert line.startswith('the model answered as if it had no tools ("paste the output")')


def test_once_the_model_called_a_tool_a_later_refusal_is_its_own_matter(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    agent, events = make_agent(tools=[BashTool()], tool_calls="native")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo ran"})]),
        Reply(text="I ran it:\n\n```bash\n$ echo ran\nran\n```\n\nPaste the output of yours."),
        Reply(text="I can't run commands as root, so I left /etc alone."),
    )
    agent.run_turn("run echo")
    agent.run_turn("and as root?")
    assert warnings(events) == []


def test_in_text_mode_nothing_is_read_as_a_server_dropping_tools(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = make_agent(tools=[BashTool()], tool_calls="text")
    model_server.enqueue(Reply(text=REFUSAL))
    agent.run_turn("list the files")
    assert warnings(events) == []
