"""Each fault reaches the real openai client the way a failing real server's would.

These assertions are the reference for the agent core: which exception, or a silent early end.
"""

from __future__ import annotations

import json

import openai
import pytest

from scripted_server import Reply

TEXT = "The first half of this answer arrives, the second half never does."


def test_a_stream_cut_without_done_ends_silently_with_no_finish_reason(model_server, stream_reply):
    model_server.enqueue(Reply(text=TEXT, fault="no_done"))
    result = stream_reply(model_server)
    assert result.error is None
    assert result.finish_reasons == []
    assert result.text and TEXT.startswith(result.text) and result.text != TEXT


def test_an_error_event_mid_stream_raises_api_error_with_its_message(model_server, stream_reply):
    model_server.enqueue(Reply(text=TEXT, fault="error_event"))
    result = stream_reply(model_server)
    assert type(result.error) is openai.APIError
    assert result.error.message == "scripted mid-stream failure"
    assert result.error.body == {"message": "scripted mid-stream failure", "type": "server_error"}
    assert result.text and TEXT.startswith(result.text) and result.text != TEXT


def test_a_malformed_chunk_raises_a_bare_json_decode_error(model_server, stream_reply):
    model_server.enqueue(Reply(text=TEXT, fault="malformed_chunk"))
    result = stream_reply(model_server)
    assert isinstance(result.error, json.JSONDecodeError)
    assert not isinstance(result.error, openai.OpenAIError)
    assert result.text and TEXT.startswith(result.text) and result.text != TEXT


def test_a_dropped_connection_mid_stream_raises_api_connection_error(model_server, stream_reply):
    model_server.enqueue(Reply(text=TEXT, fault="disconnect"))
    result = stream_reply(model_server)
    assert type(result.error) is openai.APIConnectionError
    assert result.text and TEXT.startswith(result.text) and result.text != TEXT


def test_a_stall_longer_than_the_client_timeout_raises_api_timeout_error(
    model_server, stream_reply
):
    model_server.enqueue(Reply(text="too late", stall=30.0))
    result = stream_reply(model_server, client_options={"timeout": 0.3})
    assert type(result.error) is openai.APITimeoutError
    assert result.chunks == []


def test_a_short_stall_only_delays_the_answer(model_server, stream_reply):
    model_server.enqueue(Reply(text="late but fine", stall=0.1))
    assert stream_reply(model_server).text == "late but fine"


@pytest.mark.parametrize(
    ("status", "body", "exception", "message"),
    [
        (401, None, openai.AuthenticationError, "Error code: 401 - Unauthorized"),
        (
            404,
            {"error": {"message": 'model "x" not found'}},
            openai.NotFoundError,
            'Error code: 404 - model "x" not found',
        ),
        (
            400,
            {"error": {"message": "registry.ollama.ai/library/gemma3:12b does not support tools"}},
            openai.BadRequestError,
            "Error code: 400 - registry.ollama.ai/library/gemma3:12b does not support tools",
        ),
        (429, None, openai.RateLimitError, "Error code: 429 - Too Many Requests"),
        (500, None, openai.InternalServerError, "Error code: 500 - Internal Server Error"),
        (503, None, openai.InternalServerError, "Error code: 503 - Service Unavailable"),
    ],
)
def test_an_http_error_status_raises_the_matching_status_error(
    status, body, exception, message, model_server, stream_reply
):
    model_server.enqueue(Reply(status=status, error_body=body))
    result = stream_reply(model_server)
    assert type(result.error) is exception
    assert result.error.status_code == status
    assert result.error.message == message


def test_each_client_retry_plays_the_next_reply(model_server, stream_reply):
    fast_retry = {"retry-after-ms": "1"}
    model_server.enqueue(
        Reply(status=429, headers=fast_retry),
        Reply(status=500, headers=fast_retry),
        Reply(text="third time lucky"),
    )
    result = stream_reply(model_server, client_options={"max_retries": 2})
    assert result.text == "third time lucky"
    assert len(model_server.requests) == 3


def test_a_paced_stream_can_be_abandoned_mid_way_and_the_server_goes_on(
    model_server, openai_client, stream_reply
):
    model_server.enqueue(Reply(text=TEXT, chunk_size=2, delay=0.05), Reply(text="next"))
    client = openai_client(model_server)
    stream = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    received = [next(stream) for _ in range(3)]
    stream.close()
    assert len(received) == 3
    assert stream_reply(model_server).text == "next"


def test_faults_of_a_non_streamed_call_drop_the_connection(model_server, openai_client):
    model_server.enqueue(Reply(text=TEXT, fault="disconnect"))
    client = openai_client(model_server)
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
