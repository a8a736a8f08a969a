"""Chat templates that demand alternation: after a failed or interrupted turn the
next request never carries two user (or two assistant) messages in a row; the history keeps
what happened."""

from __future__ import annotations

from mm_tui.agent.text_calls import alternating, to_text_protocol
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory, assert_valid_history


def roles(messages: list[dict]) -> list[str]:
    return [m["role"] for m in messages]


def test_a_failed_turn_then_a_new_one_sends_one_user_message(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(status=400, error_body={"error": {"message": "bad request"}}), Reply(text="Hi.")
    )
    agent, _ = make_agent()

    assert agent.run_turn("first").reason == "error"
    assert agent.run_turn("second").reason == "answered"

    sent = model_server.requests[-1]["messages"]
    assert roles(sent) == ["system", "user"]
    assert sent[1]["content"] == "first\n\nsecond"
    assert [m["role"] for m in agent.messages].count("user") == 2  # the history keeps both
    assert_valid_history(agent.messages)


def test_neighbours_of_one_role_are_joined_and_tool_turns_are_left_alone() -> None:
    calls = [{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "a"},
        {"role": "user", "content": [{"type": "text", "text": "b"}]},
        {"role": "assistant", "content": "partial"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        {"role": "tool", "tool_call_id": "c", "content": "r"},
        {"role": "assistant", "content": "done"},
    ]
    out = alternating(messages)
    assert roles(out) == ["system", "user", "assistant", "tool", "assistant"]
    assert out[1]["content"] == [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert out[2] == {"role": "assistant", "content": "partial", "tool_calls": calls}
    assert messages[1] == {"role": "user", "content": "a"}  # the input is not changed


def test_text_mode_reads_a_content_given_as_parts_as_its_text() -> None:
    """The API allows a list of parts where a content is; text mode wrote `list + str` there
    and raised."""
    calls = [{"id": "c", "type": "function", "function": {"name": "x", "arguments": "{}"}}]
    messages = [
        {"role": "system", "content": [{"type": "text", "text": "be brief"}]},
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "calling"}],
            "tool_calls": calls,
        },
        {"role": "tool", "tool_call_id": "c", "content": "r"},
    ]
    out = to_text_protocol(messages, "\n## x")
    assert out[0] == {"role": "system", "content": "be brief\n## x"}
    assert out[2]["content"].startswith("calling\n<tool_call>\n")
