"""The SSE body read as its bytes arrive: however the server cuts its blocks and
ends its lines, the same chunks come out, as SSE says."""

from __future__ import annotations

import json

import pytest

from mm_tui.agent.model_client import ModelFault, sse_chunks

ONE = {"choices": [{"delta": {"content": "héllo ✓"}}]}
TWO = {"choices": [{"delta": {"content": "world"}}], "usage": {"prompt_tokens": 1}}


def event(chunk: object, end: bytes = b"\n") -> bytes:
    return b"data: " + json.dumps(chunk, ensure_ascii=False).encode() + end + end


def every_cut(body: bytes) -> list[list[bytes]]:
    """The body whole, one byte at a time, and cut in two at every place."""
    return [[body], [body[i : i + 1] for i in range(len(body))]] + [
        [body[:i], body[i:]] for i in range(1, len(body))
    ]


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_the_same_chunks_however_the_blocks_are_cut_and_the_lines_end(end: bytes) -> None:
    body = b": a comment" + end + b"event: x" + end + event(ONE, end) + event(TWO, end)
    body += b"data: [DONE]" + end + end + event({"never": "read"}, end)
    for blocks in every_cut(body):
        assert list(sse_chunks(iter(blocks))) == [ONE, TWO], blocks


def test_data_lines_of_one_event_are_joined_and_a_last_event_left_open_is_read() -> None:
    body = b'data: {"choices":\ndata: []}\n\ndata: {"last": true}'
    for blocks in every_cut(body):
        assert list(sse_chunks(iter(blocks))) == [{"choices": []}, {"last": True}]


def test_undecodable_bytes_are_replaced_not_fatal() -> None:
    body = b'data: {"choices": [{"delta": {"content": "a\xffb"}}]}\n\n'
    assert list(sse_chunks(iter([body]))) == [{"choices": [{"delta": {"content": "a\ufffdb"}}]}]


def test_an_error_event_is_a_fault_and_a_broken_chunk_is_malformed() -> None:
    with pytest.raises(ModelFault, match="reported an error mid-stream: overloaded$"):
        list(sse_chunks(iter([event(ONE), event({"error": {"message": "overloaded"}})])))
    with pytest.raises(ValueError):
        list(sse_chunks(iter([b'data: {"choices": [\n\n'])))


def test_what_msgspec_refuses_reads_as_the_json_module_reads_it() -> None:
    """msgspec decodes the usual chunk; NaN, a lone surrogate, a number past a float and
    another encoding than UTF-8 read exactly as `json` read them before."""
    body = (
        b'data:{"a": NaN, "b": "\\ud800", "c": 1e400}\n\n'
        b'data: {"choices": [{"delta": {"content": "caf\xe9"}}]}\n\n'
    )
    nan_chunk, text_chunk = list(sse_chunks([body], "latin-1"))
    assert nan_chunk["a"] != nan_chunk["a"] and nan_chunk["b"] == "\ud800"
    assert nan_chunk["c"] == float("inf")
    assert text_chunk == {"choices": [{"delta": {"content": "café"}}]}
    assert list(sse_chunks([body.split(b"\n\n")[1] + b"\n\n"])) == [
        {"choices": [{"delta": {"content": "caf\ufffd"}}]}  # as UTF-8, the byte replaced
    ]


def test_a_data_line_without_its_space_and_a_done_padded_with_spaces() -> None:
    body = b'data:{"a": 1}\n\n:keep-alive\n\ndata:  [DONE] \n\ndata: {"b": 2}\n\n'
    for blocks in every_cut(body):
        assert list(sse_chunks(iter(blocks))) == [{"a": 1}], blocks
