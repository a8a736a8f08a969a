"""Small models: the repair ladder, text protocol, context budget, /compact."""

from __future__ import annotations

import pytest

from mm_tui.agent.compaction import plan_compaction
from mm_tui.agent.context import discover_context_window
from mm_tui.agent.events import Notice, ToolFinished, ToolStarted, ToolStatus
from mm_tui.agent.session import SessionStore, read_session_document
from mm_tui.agent.text_calls import extract_text_calls
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history


def declared(name: str) -> bool:
    return name in {"echo", "bash"}


@pytest.mark.parametrize(
    ("text", "badge"),
    [
        (
            'I will run it.\n<tool_call>\n{"name": "echo", "arguments": {"text": "hi"}}\n</tool_call>',
            "<tool_call>",
        ),
        ('Sure:\n```json\n{"name": "echo", "arguments": {"text": "hi"}}\n```\n', "fenced JSON"),
        ('{"name": "echo", "parameters": {"text": "hi"}}', "bare JSON"),
        ('[TOOL_CALLS][{"name": "echo", "arguments": {"text": "hi"}}]', "<tool_call>"),
        ('<|python_tag|>{"name": "functions.echo", "parameters": {"text": "hi"}}', "<tool_call>"),
    ],
)
def test_calls_written_in_text_are_found_in_every_common_form(text: str, badge: str) -> None:
    found = extract_text_calls(text, declared)
    assert [(c.name, c.arguments) for c in found.calls] == [("echo", {"text": "hi"})]
    assert badge in found.calls[0].badge


def test_a_tagged_call_cut_inside_a_string_is_kept_so_the_model_hears_its_json_was_broken() -> None:
    cut = '<tool_call>{"name": "echo", "arguments": {"text": "rm -rf /tmp/bu'
    [call] = extract_text_calls(cut, declared).calls
    assert call.name == "echo" and call.arguments == cut.removeprefix("<tool_call>")


def test_a_call_missing_only_its_last_brace_is_completed() -> None:
    [call] = extract_text_calls(
        '<tool_call>{"name": "echo", "arguments": {"text": "hi"}', declared
    ).calls
    assert call.arguments == {"text": "hi"}


def test_bare_json_naming_no_declared_tool_is_just_text() -> None:
    assert extract_text_calls('{"name": "Ada", "arguments": "none"}', declared).calls == []
    assert extract_text_calls('Here is JSON: {"a": 1}', declared).calls == []


def test_a_text_call_runs_with_its_badge_and_raw_text(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = (
        'Let me echo.\n<tool_call>{"name": "echo", "arguments": {"text": "from text"}}</tool_call>'
    )
    model_server.enqueue(Reply(text=text), Reply(text="Done."))
    agent, events = make_agent()

    agent.run_turn("echo")

    started = events.of(ToolStarted)[0]
    assert started.badge == "from text: <tool_call>" and "<tool_call>" in started.raw
    assert events.of(ToolFinished)[0].output == "from text"
    assistant = agent.messages[2]
    assert assistant["content"] == "Let me echo."
    assert assistant["tool_calls"][0]["function"]["name"] == "echo"
    assert_valid_history(agent.messages)


def test_a_text_call_to_an_undeclared_tool_gets_the_closest_name(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = '<tool_call>{"name": "run_echo", "arguments": {"text": "x"}}</tool_call>'
    model_server.enqueue(Reply(text=text), Reply(text="Sorry."))
    agent, events = make_agent()

    agent.run_turn("go")

    finished = events.of(ToolFinished)[0]
    assert finished.status is ToolStatus.FAILED
    assert 'no tool named "run_echo". Did you mean "echo"?' in finished.output
    assert_valid_history(agent.messages)


def test_native_calls_win_over_text_that_looks_like_a_call(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    text = '<tool_call>{"name": "echo", "arguments": {"text": "text one"}}</tool_call>'
    model_server.enqueue(
        Reply(text=text, tool_calls=[ToolCall("echo", {"text": "native"})]), Reply(text="ok")
    )
    agent, events = make_agent()
    agent.run_turn("go")
    assert [f.output for f in events.of(ToolFinished)] == ["native"]


def test_text_mode_describes_tools_in_the_prompt_and_sends_results_as_user_messages(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    call = '<tool_call>{"name": "echo", "arguments": {"text": "t"}}</tool_call>'
    model_server.enqueue(Reply(text=call), Reply(text="Done."))
    agent, _ = make_agent(tool_calls="text")

    agent.run_turn("go")

    first, second = model_server.requests
    assert "tools" not in first
    assert "## echo" in first["messages"][0]["content"]
    roles = [m["role"] for m in second["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert second["messages"][3]["content"] == "<tool_response>\nt\n</tool_response>"
    assert "<tool_call>" in second["messages"][2]["content"]
    assert_valid_history(agent.messages)  # the session keeps the OpenAI format


def test_auto_mode_switches_to_text_when_the_server_says_the_model_has_no_tools(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(
            status=400,
            error_body={
                "error": {"message": "registry.ollama.ai/library/gemma3:12b does not support tools"}
            },
        ),
        Reply(text='<tool_call>{"name": "echo", "arguments": {"text": "t"}}</tool_call>'),
        Reply(text="Done."),
    )
    agent, events = make_agent()

    ended = agent.run_turn("go")

    assert ended.reason == "answered"
    assert agent.tool_mode == "text"
    assert "tools" in model_server.requests[0] and "tools" not in model_server.requests[1]
    assert any("does not support native tool calls" in n.text for n in events.of(Notice))
    assert events.of(ToolFinished)[0].output == "t"


def test_native_mode_does_not_switch(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(status=400, error_body={"error": {"message": "model does not support tools"}})
    )
    agent, _ = make_agent(tool_calls="native")
    ended = agent.run_turn("go")
    assert ended.reason == "error" and agent.tool_mode == "native"


def test_context_window_is_asked_of_llama_server_then_ollama(model_server: ScriptedServer) -> None:
    assert discover_context_window(model_server.base_url, "m").tokens == 8192
    model_server.ollama_ctx = 131072
    window = discover_context_window(model_server.base_url, "m")  # no /api/ps: not loaded
    assert (window.tokens, window.pending, window.note, window.trained) == (4096, True, "", 131072)
    model_server.ollama_num_ctx = 16384
    assert discover_context_window(model_server.base_url, "m").tokens == 16384
    model_server.n_ctx = 32768
    assert discover_context_window(model_server.base_url, "m").tokens == 32768


def test_a_server_that_cuts_the_prompt_is_called_out(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(Reply(text="ok", usage={"prompt_tokens": 300, "completion_tokens": 2}))
    agent, events = make_agent(context_window=100000)

    agent.run_turn("read this: " + "lorem ipsum dolor " * 1000)

    [warning] = [n for n in events.of(Notice) if "cutting the conversation" in n.text]
    assert warning.level == "warning" and "counted 300 prompt tokens" in warning.text


def long_history_agent(make_agent: AgentFactory, model_server: ScriptedServer, **config):
    agent, events = make_agent(**config)
    for i in range(4):
        model_server.enqueue(
            Reply(tool_calls=[ToolCall("echo", {"text": f"tool {i}"})]), Reply(text=f"answer {i}")
        )
        agent.run_turn(f"request {i}")
    return agent, events


def test_compact_keeps_the_first_message_and_last_turns_and_pairs_together(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = long_history_agent(make_agent, model_server)
    agent.detector.record("echo", {"text": "x"}, "x")
    model_server.enqueue(Reply(text="## Goal\n- echo things\n## Next step\n- none"))

    agent.compact()

    contents = [m.get("content") for m in agent.messages]
    assert agent.messages[1] == {"role": "user", "content": "request 0"}
    assert contents[2].startswith("[Summary of the earlier conversation, written by /compact]")
    assert "## Goal" in contents[2]
    assert contents[3:] == [
        "request 2",
        None,
        "tool 2",
        "answer 2",
        "request 3",
        None,
        "tool 3",
        "answer 3",
    ]
    assert_valid_history(agent.messages)
    summary_request = model_server.requests[-1]
    assert "tools" not in summary_request
    assert "## Files touched" in summary_request["messages"][0]["content"]
    assert "request 1" in summary_request["messages"][1]["content"]
    assert agent.detector.count == 1  # /compact does not reset the loop detector
    reopened = SessionStore(agent.session_path.parent).load(agent.session.id)
    assert reopened.messages == agent.messages  # what the model is sent, after the marker
    said = [m.get("content") for m in read_session_document(agent.session_path)["messages"]]
    for n in range(4):  # the file keeps every message, the summarised ones included
        assert f"request {n}" in said and f"tool {n}" in said and f"answer {n}" in said
    assert said[-1] == contents[2]


def test_when_the_summary_fails_the_oldest_turns_are_dropped_and_said(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = long_history_agent(make_agent, model_server)
    model_server.enqueue(Reply(status=400, error_body={"error": {"message": "too long"}}))

    agent.compact()

    assert (
        agent.messages[2]["content"].startswith("[") and "dropped" in agent.messages[2]["content"]
    )
    assert agent.messages[1]["content"] == "request 0"
    assert_valid_history(agent.messages)
    assert any("compaction failed" in n.text for n in events.of(Notice) if n.level == "warning")


def test_compaction_runs_by_itself_past_the_threshold(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    agent, events = long_history_agent(make_agent, model_server, context_window=400)
    assert any("compacting" in n.text for n in events.of(Notice))
    assert any(
        str(m.get("content", "")).startswith("[Summary") or "dropped" in str(m.get("content"))
        for m in agent.messages
    )
    assert_valid_history(agent.messages)


def test_a_plan_never_splits_a_call_from_its_result() -> None:
    messages = [{"role": "system", "content": "s"}]
    for i in range(5):
        messages += [
            {"role": "user", "content": f"u{i}"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"c{i}",
                        "type": "function",
                        "function": {"name": "echo", "arguments": "{}"},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": "r"},
            {"role": "assistant", "content": f"a{i}"},
        ]
    plan = plan_compaction(messages)
    assert plan is not None
    assert_valid_history(plan.with_summary("s")) and None is None
    assert_valid_history(plan.with_middle_dropped())
    assert plan_compaction(messages[:5]) is None  # one turn: nothing to compact


def test_a_short_conversation_is_not_compacted_into_as_many_messages() -> None:
    """Two plain turns: the only message a summary could replace is the first answer, and one
    note for one message shortens nothing ("5 → 5 messages" before)."""
    messages = [{"role": "system", "content": "s"}]
    for i in range(2):
        messages += [{"role": "user", "content": f"u{i}"}, {"role": "assistant", "content": "a"}]
    assert plan_compaction(messages) is None
    messages += [{"role": "user", "content": "u2"}, {"role": "assistant", "content": "a"}]
    plan = plan_compaction(messages)
    assert plan is not None and len(plan.with_summary("s")) < len(messages)


def test_model_listing_and_switching(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.models = ["a", "b"]
    agent, _ = make_agent()
    assert agent.list_models() == ["a", "b"]
    agent.set_model("b")
    model_server.enqueue(Reply(text="hi"))
    agent.run_turn("x")
    assert model_server.requests[0]["model"] == "b"
