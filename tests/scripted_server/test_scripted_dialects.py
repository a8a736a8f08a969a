"""Each dialect, read through the real openai client, looks like the server it imitates."""

from __future__ import annotations

import json
import math

import pytest

from scripted_server import DIALECTS, Reply, ToolCall

REASONING_FIELD = {
    "openai": "reasoning_content",
    "ollama": "reasoning",
    "llamacpp": "reasoning_content",
    "llamacpp_legacy": "reasoning_content",
    "lmstudio": "reasoning_content",
    "vllm": "reasoning",
}
FRAGMENTING_DIALECTS = ["openai", "llamacpp", "llamacpp_legacy", "vllm"]
TEXT = "Hello **world**, this answer is long enough to need several chunks."
BASH_LS = ToolCall("bash", {"command": "ls -la"})
READ_FILE = ToolCall("read_file", {"path": "src/main.py"})


@pytest.mark.parametrize("dialect", DIALECTS)
def test_text_arrives_whole_in_pieces_of_chunk_size(dialect, scripted_server_factory, stream_reply):
    server = scripted_server_factory(dialect)
    server.enqueue(Reply(text=TEXT, chunk_size=5))
    result = stream_reply(server)
    assert result.error is None
    pieces = [delta.content for delta in result.deltas if delta.content]
    assert "".join(pieces) == TEXT
    assert len(pieces) == math.ceil(len(TEXT) / 5)
    assert all(len(piece) <= 5 for piece in pieces)
    assert result.finish_reasons == ["stop"]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_reasoning_arrives_in_the_field_its_server_uses(
    dialect, scripted_server_factory, stream_reply
):
    server = scripted_server_factory(dialect)
    server.enqueue(Reply(reasoning="let me think about it", text="ok"))
    result = stream_reply(server)
    field = REASONING_FIELD[dialect]
    other = "reasoning" if field == "reasoning_content" else "reasoning_content"
    assert result.reasoning(field) == "let me think about it"
    assert result.reasoning(other) == ""
    assert result.text == "ok"
    first_reasoning = next(i for i, d in enumerate(result.deltas) if getattr(d, field, None))
    first_text = next(i for i, d in enumerate(result.deltas) if d.content)
    assert first_reasoning < first_text


@pytest.mark.parametrize("dialect", FRAGMENTING_DIALECTS)
def test_openai_shaped_tool_calls_stream_their_arguments_in_fragments(
    dialect, scripted_server_factory, stream_reply
):
    server = scripted_server_factory(dialect)
    server.enqueue(Reply(tool_calls=[BASH_LS, READ_FILE], chunk_size=4))
    result = stream_reply(server)
    fragments = result.tool_call_fragments
    for index, call in enumerate([BASH_LS, READ_FILE]):
        mine = [fragment for fragment in fragments if fragment.index == index]
        opening, later = mine[0], mine[1:]
        assert opening.id and opening.function.name == call.name
        assert all(f.id is None and f.function.name is None for f in later)
        assert all(len(f.function.arguments) <= 4 for f in later)
        arguments = "".join(f.function.arguments or "" for f in mine)
        assert json.loads(arguments) == call.arguments
    assert result.finish_reasons == ["tool_calls"]


def test_ollama_sends_each_tool_call_whole_and_all_at_index_zero(
    scripted_server_factory, stream_reply
):
    server = scripted_server_factory("ollama")
    server.enqueue(Reply(tool_calls=[BASH_LS, READ_FILE], chunk_size=4))
    result = stream_reply(server)
    fragments = result.tool_call_fragments
    assert [f.index for f in fragments] == [0, 0]
    assert [f.function.name for f in fragments] == ["bash", "read_file"]
    assert [json.loads(f.function.arguments) for f in fragments] == [
        BASH_LS.arguments,
        READ_FILE.arguments,
    ]
    assert fragments[0].id != fragments[1].id
    assert all(f.id.startswith("call_") for f in fragments)
    assert result.finish_reasons == ["tool_calls"]
    assert all(delta.role == "assistant" for delta in result.deltas if delta.tool_calls)


def test_older_ollama_finishing_tool_calls_with_stop_is_scripted_by_finish_reason(
    scripted_server_factory, stream_reply
):
    server = scripted_server_factory("ollama")
    server.enqueue(Reply(tool_calls=[BASH_LS], finish_reason="stop"))
    result = stream_reply(server)
    assert result.finish_reasons == ["stop"]
    assert result.tool_call_fragments[0].function.name == "bash"


def test_lmstudio_later_fragments_carry_an_empty_name_and_an_empty_id(
    scripted_server_factory, stream_reply
):
    server = scripted_server_factory("lmstudio")
    server.enqueue(Reply(tool_calls=[BASH_LS], chunk_size=4))
    fragments = stream_reply(server).tool_call_fragments
    assert fragments[0].function.name == "bash" and fragments[0].id
    later = fragments[1:]
    assert later and all(f.function.name == "" and f.id == "" for f in later)
    assert json.loads("".join(f.function.arguments for f in fragments)) == BASH_LS.arguments


@pytest.mark.parametrize("dialect", ["openai", "ollama", "lmstudio", "vllm"])
def test_usage_comes_in_a_chunk_without_choices_only_when_asked(
    dialect, scripted_server_factory, stream_reply
):
    server = scripted_server_factory(dialect)
    server.enqueue(Reply(text="hi"), Reply(text="hi"))
    assert stream_reply(server).usage_chunks == []
    asked = stream_reply(server, stream_options={"include_usage": True})
    assert asked.usage_chunks == [asked.chunks[-1]]
    assert asked.chunks[-1].choices == []
    assert asked.chunks[-1].usage.total_tokens > 0


def test_llamacpp_always_ends_with_a_usage_chunk_without_choices_and_timings(
    scripted_server_factory, stream_reply
):
    server = scripted_server_factory("llamacpp")
    server.enqueue(Reply(text="hi"))
    result = stream_reply(server)
    last = result.chunks[-1]
    assert last.choices == [] and last.usage is not None
    assert last.model_extra["timings"]["predicted_n"] == last.usage.completion_tokens
    assert result.chunks[-2].choices[0].finish_reason == "stop"


def test_legacy_llamacpp_puts_usage_and_timings_on_the_finish_chunk(
    scripted_server_factory, stream_reply
):
    server = scripted_server_factory("llamacpp_legacy")
    server.enqueue(Reply(text="hi"))
    last = stream_reply(server).chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.usage is not None and "timings" in last.model_extra


def test_usage_given_in_the_reply_is_sent_as_is(model_server, stream_reply):
    usage = {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290}
    model_server.enqueue(Reply(text="hi", usage=usage))
    result = stream_reply(model_server, stream_options={"include_usage": True})
    assert result.usage_chunks[0].usage.model_dump(exclude_none=True) == usage


def test_default_usage_grows_with_the_prompt_and_the_answer(model_server, stream_reply):
    model_server.enqueue(Reply(text="a" * 400), Reply(text="a" * 40))
    long_prompt = [{"role": "user", "content": "x" * 4000}]
    first = stream_reply(model_server, messages=long_prompt, stream_options={"include_usage": True})
    second = stream_reply(model_server, stream_options={"include_usage": True})
    big, small = first.usage_chunks[0].usage, second.usage_chunks[0].usage
    assert big.prompt_tokens >= 1000 > small.prompt_tokens
    assert big.completion_tokens == 100 and small.completion_tokens == 10


def test_a_reply_can_speak_another_dialect_than_its_server(model_server, stream_reply):
    model_server.enqueue(Reply(tool_calls=[BASH_LS, READ_FILE], dialect="ollama"))
    fragments = stream_reply(model_server).tool_call_fragments
    assert [f.index for f in fragments] == [0, 0]


def test_arguments_given_as_a_string_are_sent_verbatim(model_server, stream_reply):
    broken = '{"command": "ls", '
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", broken, id="call_given")]))
    fragments = stream_reply(model_server).tool_call_fragments
    assert fragments[0].id == "call_given"
    assert "".join(f.function.arguments for f in fragments) == broken
