"""What each emulator puts on the wire, read off a raw socket and held against what the
server's source says (the facts here are written out, not read back from the emulators):
HTTP version and framing, how the stream ends, and what `usage` means on a cold and then a
warm prompt cache. These are the shapes the faces' tests put the client through."""

from __future__ import annotations

import json
import socket
from typing import Any

from scripted_server import Reply, ToolCall
from tests.servers.zoo import Emulator

#: name: (status line's version, framing, the body's last bytes)
WIRE = {
    "llama-server": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "ollama": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "vllm": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "sglang": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "mlx_lm.server": ("HTTP/1.0", "close", b"data: [DONE]\n\n"),
    "lm-studio": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "koboldcpp": ("HTTP/1.0", "close", b"data: [DONE]\n\n"),
    "koboldcpp-1.76": ("HTTP/1.0", "close", b"}]}\n\ndata: [DONE]"),  # no blank line after it
    "localai": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
    "llamafile": ("HTTP/1.1", "chunked", b'"object": "chat.completion.chunk"}\n\n'),  # no [DONE]
    "text-generation-webui": ("HTTP/1.1", "chunked", b"data: [DONE]\n\n"),
}
#: name: what `usage` says of the second (warm) request: the prompt as counted, and where the
#: cached part is said. None: no usage in the stream at all.
USAGE = {
    "llama-server": "whole prompt; timings.cache_n",
    "ollama": "evaluated only",
    "vllm": "whole prompt",
    "sglang": "whole prompt",
    "mlx_lm.server": "whole prompt; prompt_tokens_details.cached_tokens",
    "lm-studio": "whole prompt",
    "koboldcpp": None,
    "koboldcpp-1.76": None,
    "localai": "whole prompt",
    "llamafile": None,
    "text-generation-webui": "whole prompt",
}

MESSAGES = [{"role": "system", "content": "You are terse. " * 200},
            {"role": "user", "content": "Read a.txt"}]  # fmt: skip


def raw_chat(emulator: Emulator, messages: list[dict[str, Any]]) -> tuple[bytes, bytes]:
    """(head, body) of a streamed chat request, read to the connection's end."""
    body = json.dumps({"model": emulator.model, "stream": True, "messages": messages,
                       "stream_options": {"include_usage": True}}).encode()  # fmt: skip
    path = emulator.base_path + "/chat/completions"
    head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode()  # fmt: skip
    port = int(emulator.root_url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head + body)
        received = b""
        while chunk := connection.recv(65536):
            received += chunk
    answer_head, _, answer_body = received.partition(b"\r\n\r\n")
    return answer_head, answer_body


def dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            return out
        out, body = out + rest[:size], rest[size + 2 :]
    raise AssertionError("the chunked body has no last chunk")


def events(body: bytes) -> list[dict[str, Any]]:
    found = []
    for line in body.decode().splitlines():
        if line.startswith("data: ") and line != "data: [DONE]":
            found.append(json.loads(line[len("data: ") :]))
    return found


def test_each_server_frames_its_stream_as_its_source_does(emulator: Emulator) -> None:
    version, framing, ending = WIRE[emulator.name]
    emulator.enqueue(Reply(text="Reading.", tool_calls=[ToolCall("read_file", {"path": "a"})]))

    head, body = raw_chat(emulator, MESSAGES)

    lines = head.decode().split("\r\n")
    assert lines[0].startswith(f"{version} 200"), lines[0]
    headers = {line.split(":", 1)[0].lower(): line.split(":", 1)[1].strip() for line in lines[1:]}
    assert "content-length" not in headers
    assert (headers.get("transfer-encoding") == "chunked") == (framing == "chunked"), headers
    payload = dechunk(body) if framing == "chunked" else body
    assert payload.endswith(ending), payload[-80:]
    chunks = events(payload)
    assert chunks and all(c["object"].startswith("chat.completion") for c in chunks)


def test_usage_on_a_cold_then_a_warm_cache_means_what_the_source_says(
    emulator: Emulator,
) -> None:
    emulator.enqueue(Reply(text="First."), Reply(text="Second."))
    cold = [c for c in events(unframed(emulator, MESSAGES)) if c.get("usage")]
    longer = [*MESSAGES, {"role": "assistant", "content": "First."},
              {"role": "user", "content": "Again"}]  # fmt: skip
    warm_chunks = events(unframed(emulator, longer))
    warm = [c for c in warm_chunks if c.get("usage")]

    kind = USAGE[emulator.name]
    if kind is None:
        assert cold == warm == []
        return
    [cold_usage], [warm_usage] = [c["usage"] for c in cold], [c["usage"] for c in warm]
    assert [c["choices"] for c in warm] == [[]]  # the usage chunk has no choices
    whole = len(json.dumps(longer)) // 4
    if kind.startswith("whole prompt"):
        assert warm_usage["prompt_tokens"] >= whole * 0.9, (warm_usage, whole)
    else:  # Ollama: only the tokens it evaluated, the cached prefix left out
        assert warm_usage["prompt_tokens"] < whole * 0.2 < cold_usage["prompt_tokens"]
    if "cached_tokens" in kind:
        assert warm_usage["prompt_tokens_details"]["cached_tokens"] >= whole * 0.8
    if "cache_n" in kind:
        assert warm_chunks[-1]["timings"]["cache_n"] >= whole * 0.8


def unframed(emulator: Emulator, messages: list[dict[str, Any]]) -> bytes:
    _head, body = raw_chat(emulator, messages)
    return dechunk(body) if WIRE[emulator.name][1] == "chunked" else body
