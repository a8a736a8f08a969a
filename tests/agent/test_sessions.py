"""Sessions (SPEC §8): one line appended per message, resumable, never the API key."""

from __future__ import annotations

import json
from pathlib import Path

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import Event, TextDelta
from mm_tui.agent.session import SessionStore, read_session_document
from mm_tui.agent.tools.registry import ToolRegistry
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, EchoTool, assert_valid_history


def test_each_message_is_one_line_appended_to_the_file(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(tool_calls=[ToolCall("echo", {"text": "x"})]), Reply(text="ok"))
    seen: list[tuple[int, int]] = []
    agent, events = make_agent()
    original_append = agent.conversation.append

    def spy(message: dict, record: object = None) -> None:
        original_append(message, record)  # type: ignore[arg-type]
        lines = agent.session_path.read_bytes().count(b"\n")
        seen.append((len(read_session_document(agent.session_path)["messages"]), lines))

    agent.conversation.append = spy  # type: ignore[method-assign]
    agent.run_turn("go")

    # user, assistant+call, tool, assistant: the file is created with the header, the system
    # prompt and the first message, then grows by exactly one line per message
    assert seen == [(2, 3), (3, 4), (4, 5), (5, 6)]
    first = json.loads(agent.session_path.read_bytes().split(b"\n")[0])
    assert first["type"] == "session" and first["version"] == 2
    data = read_session_document(agent.session_path)
    assert data["model"] == "scripted-model"
    assert data["base_url"] == model_server.base_url and data["cwd"] == str(agent.cwd)
    assert data["counters"]["commands"] == 1 and data["usage"]["prompt_tokens"] > 0
    assert data["errors"] == []
    assert not list(agent.session_path.parent.glob("*tmp*"))  # no leftover temp files


def test_the_api_key_appears_in_no_session_file(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="hello"))
    agent, _ = make_agent(api_key="sk-very-secret-key-123")
    agent.run_turn("hi")
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert b"sk-very-secret-key-123" not in path.read_bytes()
    assert "sk-very-secret" not in repr(agent.config)


def make(server: ScriptedServer, tmp_path: Path, **kwargs) -> tuple[Agent, list[Event]]:
    events: list[Event] = []
    agent = Agent(
        Config(base_url=server.base_url, model="scripted-model"),
        events.append,
        tmp_path,
        store=SessionStore(tmp_path / "sessions"),
        registry=ToolRegistry.of([EchoTool()]),
        **kwargs,
    )
    return agent, events


def test_continue_resumes_the_last_session_of_this_directory(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="first answer"), Reply(text="second answer"))
    first, _ = make(model_server, tmp_path)
    first.run_turn("remember 42")

    first.close()  # the first mm-tui ended

    resumed, _ = make(model_server, tmp_path, continue_last=True)
    assert resumed.session.id == first.session.id
    resumed.run_turn("what number?")

    sent = json.dumps(model_server.requests[1]["messages"])
    assert "remember 42" in sent and "first answer" in sent
    assert any("resumed session" in n.text for n in resumed.startup_notices)


def test_resume_by_id_and_a_corrupt_or_future_file_starts_fresh_and_keeps_it(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="a"))
    first, _ = make(model_server, tmp_path)
    first.run_turn("hi")
    first.close()
    again, _ = make(model_server, tmp_path, resume=first.session.id)
    assert again.messages == first.messages
    again.close()

    for content in ('{"type": "session", "vers', '{"type": "session", "version": 99}\n'):
        first.session_path.write_text(content)
        broken, _ = make(model_server, tmp_path, resume=first.session.id)
        assert broken.session.id != first.session.id
        assert first.session_path.read_text() == content  # untouched
        [notice] = [n for n in broken.startup_notices if n.level == "error"]
        assert "starting a new session" in notice.text and "\n" not in notice.text


def test_interrupted_and_failed_turns_leave_a_valid_saved_history(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="partial", fault="no_done"))
    agent, events = make_agent()
    agent.run_turn("go")
    saved = read_session_document(agent.session_path)
    assert_valid_history(saved["messages"])
    assert saved["messages"][-1] == {"role": "assistant", "content": "partial"}
    assert "".join(e.text for e in events.of(TextDelta)) == "partial"
