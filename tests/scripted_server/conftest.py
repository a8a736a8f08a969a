"""Helpers for the scripted server's own tests: talk to it through the real openai client."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletionChunk

from scripted_server import ScriptedServer

USER_MESSAGES = [{"role": "user", "content": "hi"}]


@dataclass
class StreamResult:
    """What a client saw of one streamed reply."""

    chunks: list[ChatCompletionChunk] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def deltas(self) -> list[Any]:
        return [chunk.choices[0].delta for chunk in self.chunks if chunk.choices]

    @property
    def text(self) -> str:
        return "".join(delta.content or "" for delta in self.deltas)

    def reasoning(self, field_name: str) -> str:
        return "".join(getattr(delta, field_name, None) or "" for delta in self.deltas)

    @property
    def tool_call_fragments(self) -> list[Any]:
        return [fragment for delta in self.deltas for fragment in (delta.tool_calls or [])]

    @property
    def finish_reasons(self) -> list[str]:
        return [
            c.choices[0].finish_reason
            for c in self.chunks
            if c.choices and c.choices[0].finish_reason
        ]

    @property
    def usage_chunks(self) -> list[ChatCompletionChunk]:
        return [chunk for chunk in self.chunks if chunk.usage is not None]


@pytest.fixture
def openai_client() -> Iterator[Callable[..., openai.OpenAI]]:
    """Make real openai clients (no retries by default), all closed after the test."""
    clients: list[openai.OpenAI] = []

    def make(server: ScriptedServer, **options: Any) -> openai.OpenAI:
        options.setdefault("max_retries", 0)
        options.setdefault("timeout", 10.0)
        client = openai.OpenAI(base_url=server.base_url, api_key="x", **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def stream_reply(openai_client: Callable[..., openai.OpenAI]) -> Callable[..., StreamResult]:
    """Stream one completion through the openai client; keep the chunks and any exception."""

    def stream(
        server: ScriptedServer, client_options: dict | None = None, **request: Any
    ) -> StreamResult:
        client = openai_client(server, **(client_options or {}))
        request.setdefault("model", "scripted-model")
        request.setdefault("messages", USER_MESSAGES)
        result = StreamResult()
        try:
            for chunk in client.chat.completions.create(stream=True, **request):
                result.chunks.append(chunk)
        except Exception as error:  # the test asserts which one
            result.error = error
        return result

    return stream
