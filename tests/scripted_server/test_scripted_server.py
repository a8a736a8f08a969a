"""The server's own contract: capture, queue, side endpoints, non-streamed answers, clean stops."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest

from scripted_server import SCRIPT_EXHAUSTED_TEXT, Reply, ScriptedServer, ToolCall


def http_json(server: ScriptedServer, method: str, path: str, body: object = None):
    """One plain HTTP request, so the side endpoints are tested without any client's help."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        payload = None if body is None else json.dumps(body)
        connection.request(method, path, payload, {"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"null")
    finally:
        connection.close()


def test_urls_point_at_the_bound_port_on_localhost(model_server):
    assert model_server.port > 0
    assert model_server.root_url == f"http://127.0.0.1:{model_server.port}"
    assert model_server.base_url == f"http://127.0.0.1:{model_server.port}/v1"


def test_every_chat_request_body_is_captured_in_order(model_server, stream_reply):
    model_server.enqueue(Reply(text="one"), Reply(text="two"))
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    stream_reply(model_server, messages=[{"role": "user", "content": "first"}], tools=tools)
    stream_reply(model_server, messages=[{"role": "user", "content": "second"}], temperature=0.2)
    first, second = model_server.wait_for_requests(2)
    assert first["messages"] == [{"role": "user", "content": "first"}]
    assert first["tools"] == tools and first["stream"] is True
    assert second["messages"][0]["content"] == "second" and second["temperature"] == 0.2


def test_the_server_says_when_each_request_came_and_its_reply_was_all_sent(
    model_server, stream_reply
):
    """What a bench times from: the last token sent, the first request received."""
    model_server.enqueue(Reply(text="one two three", chunk_size=4, delay=0.01), Reply(text="b"))
    before = time.monotonic()
    stream_reply(model_server)
    between = time.monotonic()
    stream_reply(model_server)
    arrived, answered = model_server.arrived_at, model_server.answered_at
    assert len(arrived) == len(answered) == 2
    assert before <= arrived[0] <= answered[0] <= between <= arrived[1] <= answered[1]


def test_replies_are_played_in_order_then_the_script_says_it_is_exhausted(
    model_server, stream_reply
):
    model_server.enqueue(Reply(text="one"))
    model_server.enqueue(Reply(text="two"))
    assert model_server.pending == 2
    texts = [stream_reply(model_server).text for _ in range(3)]
    assert texts == ["one", "two", SCRIPT_EXHAUSTED_TEXT]
    assert model_server.pending == 0


def test_waiting_for_requests_that_never_come_raises_timeout_error(model_server):
    with pytest.raises(TimeoutError, match="got 0 request"):
        model_server.wait_for_requests(1, timeout=0.05)


def test_waiting_for_requests_returns_once_another_thread_sent_them(model_server, stream_reply):
    model_server.enqueue(Reply(text="hi"))
    sender = threading.Thread(target=stream_reply, args=(model_server,))
    sender.start()
    captured = model_server.wait_for_requests(1, timeout=10)
    sender.join()
    assert captured[0]["messages"][0]["content"] == "hi"


def test_the_model_list_is_served_through_the_openai_client(model_server, openai_client):
    model_server.models = ["m1", "m2"]
    models = openai_client(model_server).models.list()
    assert [model.id for model in models] == ["m1", "m2"]
    assert all(model.owned_by == "scripted" for model in models)
    assert ("GET", "/v1/models", None) in model_server.other_requests


def test_the_default_model_list_has_one_model(model_server):
    status, body = http_json(model_server, "GET", "/v1/models")
    assert status == 200
    assert body == {
        "object": "list",
        "data": [{"id": "scripted-model", "object": "model", "owned_by": "scripted"}],
    }


def test_llama_server_props_give_the_context_size_only_when_set(model_server):
    assert http_json(model_server, "GET", "/props")[0] == 404
    model_server.n_ctx = 32768
    status, body = http_json(model_server, "GET", "/props")
    assert status == 200 and body["default_generation_settings"]["n_ctx"] == 32768
    assert [entry[:2] for entry in model_server.other_requests] == [("GET", "/props")] * 2


def test_ollama_show_gives_the_context_length_only_when_set(model_server):
    assert http_json(model_server, "POST", "/api/show", {"model": "gemma3"})[0] == 404
    model_server.ollama_ctx = 131072
    model_server.ollama_num_ctx = 8192
    status, body = http_json(model_server, "POST", "/api/show", {"model": "gemma3"})
    assert status == 200
    assert body["model_info"]["llama.context_length"] == 131072
    assert body["parameters"].split() == ["num_ctx", "8192"]
    assert model_server.other_requests[-1] == ("POST", "/api/show", {"model": "gemma3"})


def test_an_unknown_path_answers_404_in_json(model_server):
    status, body = http_json(model_server, "GET", "/nowhere")
    assert status == 404 and "nowhere" in body["error"]["message"]


@pytest.mark.parametrize(
    ("dialect", "reasoning_field"),
    [("openai", "reasoning_content"), ("ollama", "reasoning"), ("vllm", "reasoning")],
)
def test_a_non_streamed_call_gets_the_same_reply_as_one_completion(
    dialect, reasoning_field, scripted_server_factory, openai_client
):
    server = scripted_server_factory(dialect)
    server.enqueue(Reply(text="summary", reasoning="why", tool_calls=[ToolCall("bash", {"a": 1})]))
    completion = openai_client(server).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "compact"}]
    )
    choice = completion.choices[0]
    assert choice.message.content == "summary"
    assert choice.message.model_extra[reasoning_field] == "why"
    assert choice.message.tool_calls[0].function.name == "bash"
    assert json.loads(choice.message.tool_calls[0].function.arguments) == {"a": 1}
    assert choice.finish_reason == "tool_calls"
    assert completion.usage.total_tokens > 0
    assert "stream" not in server.requests[0]


def test_a_given_port_is_used():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        free_port = probe.getsockname()[1]
    with ScriptedServer(port=free_port) as server:
        assert server.base_url == f"http://127.0.0.1:{free_port}/v1"
        assert http_json(server, "GET", "/v1/models")[0] == 200


def test_stopping_leaves_no_thread_and_closes_the_port(openai_client, stream_reply):
    threads_before = set(threading.enumerate())
    server = ScriptedServer().start()
    server.enqueue(Reply(text="hi"), Reply(text="paced " * 50, chunk_size=1, delay=0.05))
    stream_reply(server)  # leaves a keep-alive connection open in the client's pool
    client = openai_client(server)
    paced = client.chat.completions.create(model="m", messages=[], stream=True)
    next(paced)  # a handler thread is now in the middle of a slow stream
    server.stop()
    assert set(threading.enumerate()) == threads_before
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", server.port)),
    ):
        pass
    paced.close()


def test_a_stopped_server_can_be_started_again(stream_reply):
    server = ScriptedServer()
    with server:
        server.enqueue(Reply(text="first life"))
        assert stream_reply(server).text == "first life"
    with server:
        server.enqueue(Reply(text="second life"))
        assert stream_reply(server).text == "second life"


def test_a_stalled_request_does_not_hold_up_another_client(model_server, stream_reply):
    model_server.enqueue(Reply(text="never", stall=60.0), Reply(text="fast"))
    stalled: list = []
    waiting = threading.Thread(target=lambda: stalled.append(stream_reply(model_server)))
    waiting.start()
    model_server.wait_for_requests(1)
    assert stream_reply(model_server).text == "fast"
    model_server.stop()  # wakes the stall and cuts its connection
    waiting.join()
    assert stalled[0].chunks == [] and stalled[0].error is not None


def test_the_dialect_can_change_while_serving_but_only_to_a_known_one(model_server, stream_reply):
    model_server.dialect = "ollama"
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {}), ToolCall("bash", {})]))
    assert [f.index for f in stream_reply(model_server).tool_call_fragments] == [0, 0]
    with pytest.raises(ValueError, match="unknown dialect 'gpt'"):
        model_server.dialect = "gpt"
    assert model_server.dialect == "ollama"


def test_a_paused_reply_stops_after_its_first_characters_then_sends_the_rest(openai_client):
    text = "Line one.\n\nSecond partial, pending and the rest."
    held = len("Line one.\n\nSecond partial, pending")
    with ScriptedServer() as server:
        server.enqueue(
            Reply(text=text, chunk_size=5, pause=60, pause_after=held),
            Reply(text=text, chunk_size=5, pause=0.01, pause_after=held),
        )
        client = openai_client(server)
        paused = client.chat.completions.create(model="m", messages=[], stream=True)
        seen = ""
        for chunk in paused:  # the server holds the rest for a minute: stop at the pause
            if chunk.choices and chunk.choices[0].delta.content:
                seen += chunk.choices[0].delta.content
            if len(seen) >= held:
                break
        assert seen == text[:held]
        paused.close()
        resumed = client.chat.completions.create(model="m", messages=[], stream=True)
        pieces = [c.choices[0].delta.content or "" for c in resumed if c.choices]
        assert "".join(pieces) == text
        ends = {len("".join(pieces[: n + 1])) for n in range(len(pieces))}
        assert held in ends  # the pieces are cut at the pause, whatever the chunk size
