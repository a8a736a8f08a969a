"""How each OpenAI-compatible server puts a reply on the wire: one table row per dialect.

What was checked against the real servers' code (search of the public sources, 2025-2026):
- OpenAI: first chunk carries the role, tool-call fragments carry `index`, the first one `id`,
  `type` and `function.name`, later ones only `function.arguments`; usage comes only with
  `stream_options.include_usage`, in a last chunk whose `choices` is `[]`.
- Ollama (ollama/ollama `openai/openai.go` `toChunk`/`ToToolCalls`, `middleware/openai.go`):
  every delta repeats `"role": "assistant"`, a tool call arrives whole in one chunk, each with
  its own `call_xxx` id; `ToToolCalls` left `index` at 0 for every call in the versions this
  dialect copies (newer ones number them). Reasoning is in `reasoning` (`Message.Reasoning`).
  finish_reason is "tool_calls" once a call was sent; versions before streamed tool calls said
  "stop" -- script that with `Reply(finish_reason="stop")`. Usage: only when the request sets
  `stream_options.include_usage`, as a chunk with `"choices": []` just before `[DONE]` (the
  brief guessed "on the last chunk with choices"; the code says otherwise).
- llama-server (ggml-org/llama.cpp `tools/server/server-task.cpp`, `to_json_oaicompat_chat_stream`):
  a role chunk with `content: null`, diffs, a finish chunk with `delta: {}`, then a usage chunk
  with `"choices": []`, and `timings` on the last chunk; reasoning in `reasoning_content`.
  Upstream sends the usage chunk only with `include_usage`; this dialect always sends it, as
  the brief asks, so an assembler that forgets `choices: []` is caught. `llamacpp_legacy`
  plays older builds (e.g. b6097 logs) that put usage and timings on the finish chunk itself.
- LM Studio (lmstudio-bug-tracker #649, #378): later tool-call fragments carry
  `"function": {"name": "", ...}` and an empty `id`, deltas repeat the role, `logprobs: null`,
  reasoning in `reasoning_content`.
- vLLM: standard OpenAI shape; newer vLLM puts reasoning in `reasoning` (older:
  `reasoning_content`).
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from scripted_server.script import Reply

#: Chunks an `endless_*` fault sends at most (a client that never cuts still sees an end).
ENDLESS_CAP = 2_000_000

UsagePlacement = Literal["when_asked", "always_separate", "on_finish_chunk"]


@dataclass(frozen=True)
class DialectTraits:
    """What one server does differently on the wire."""

    reasoning_field: str = "reasoning_content"
    #: A first chunk holding only the role (OpenAI, vLLM, llama-server).
    opening_role_chunk: bool = True
    #: The content of that opening chunk: "" (OpenAI, vLLM) or None (llama-server).
    opening_content: str | None = ""
    #: Ollama and LM Studio repeat `"role": "assistant"` in every non-empty delta.
    role_in_every_delta: bool = False
    #: Ollama always writes `content` (its Go field has no omitempty), "" when there is none.
    content_in_every_delta: bool = False
    #: Ollama sends each tool call complete in a single chunk.
    whole_tool_calls: bool = False
    #: Ollama leaves `index` at 0 for every tool call.
    tool_calls_at_index_zero: bool = False
    #: LM Studio's later fragments: `"id": ""` and `"function": {"name": "", ...}`.
    empty_name_in_later_fragments: bool = False
    usage_placement: UsagePlacement = "when_asked"
    sends_timings: bool = False
    system_fingerprint: str | None = None
    logprobs_null: bool = False


DIALECT_TRAITS: dict[str, DialectTraits] = {
    "openai": DialectTraits(system_fingerprint="fp_scripted"),
    "ollama": DialectTraits(
        reasoning_field="reasoning",
        opening_role_chunk=False,
        role_in_every_delta=True,
        content_in_every_delta=True,
        whole_tool_calls=True,
        tool_calls_at_index_zero=True,
        system_fingerprint="fp_ollama",
    ),
    "llamacpp": DialectTraits(
        opening_content=None,
        usage_placement="always_separate",
        sends_timings=True,
        system_fingerprint="b6097-scripted",
    ),
    "llamacpp_legacy": DialectTraits(
        opening_content=None,
        usage_placement="on_finish_chunk",
        sends_timings=True,
        system_fingerprint="b5000-scripted",
    ),
    "lmstudio": DialectTraits(
        opening_role_chunk=False,
        role_in_every_delta=True,
        empty_name_in_later_fragments=True,
        system_fingerprint="scripted-model",
        logprobs_null=True,
    ),
    "vllm": DialectTraits(reasoning_field="reasoning"),
}


#: A payload, or a float: the stream stops for that many seconds there (`Reply.pause`).
Event = dict[str, Any] | float


@dataclass(frozen=True)
class StreamPlan:
    """The SSE payloads of one streamed reply, split where a fault may strike.

    `head` is the opening chunk(s) and the first half of the content deltas, `tail` the rest
    of the deltas, `ending` the finish/usage chunks (then `[DONE]`).
    """

    head: list[Event]
    tail: list[Event]
    ending: list[dict[str, Any]]


@dataclass
class ReplyContext:
    """Who is answering what: the identifiers a real server would make up."""

    completion_id: str
    model: str
    request: dict[str, Any]
    call_ids: list[str]
    created: int = 0

    def __post_init__(self) -> None:
        if not self.created:
            self.created = int(time.time())


def _pieces(text: str, size: int) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def default_usage(reply: Reply, request: dict[str, Any]) -> dict[str, int]:
    """About 4 characters a token, the way the agent estimates when a server says nothing."""
    # A real server's prompt holds the tool schemas too, rendered by the chat template.
    sent = json.dumps(request.get("messages", []), ensure_ascii=False)
    sent += json.dumps(request.get("tools", []), ensure_ascii=False)
    prompt = len(sent) // 4
    produced = len(reply.text) + len(reply.reasoning)
    produced += sum(len(call.arguments_text()) + len(call.name) for call in reply.tool_calls)
    completion = produced // 4
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def _timings(usage: dict[str, Any]) -> dict[str, Any]:
    """llama-server's timings: `cache_n` tokens reused from its cache, `prompt_n` read anew."""
    details = usage.get("prompt_tokens_details") or {}
    cache_n = int(details.get("cached_tokens", 0) or 0)
    prompt_n = int(usage.get("prompt_tokens", 0)) - cache_n
    predicted_n = int(usage.get("completion_tokens", 0))
    return {
        "cache_n": cache_n,
        "prompt_n": prompt_n,
        "prompt_ms": 1.0,
        "prompt_per_token_ms": 1.0 / max(prompt_n, 1),
        "prompt_per_second": 1000.0 * prompt_n,
        "predicted_n": predicted_n,
        "predicted_ms": 1.0,
        "predicted_per_token_ms": 1.0 / max(predicted_n, 1),
        "predicted_per_second": 1000.0 * predicted_n,
    }


class ChunkBuilder:
    """Builds the chunk dicts of one reply in one dialect."""

    def __init__(self, traits: DialectTraits, context: ReplyContext) -> None:
        self.traits = traits
        self.context = context

    def envelope(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        chunk: dict[str, Any] = {
            "id": self.context.completion_id,
            "object": "chat.completion.chunk",
            "created": self.context.created,
            "model": self.context.model,
        }
        if self.traits.system_fingerprint is not None:
            chunk["system_fingerprint"] = self.traits.system_fingerprint
        chunk["choices"] = choices
        return chunk

    def delta_chunk(
        self, delta: dict[str, Any], finish_reason: str | None = None
    ) -> dict[str, Any]:
        if self.traits.content_in_every_delta:
            delta = {"content": "", **delta}
        if self.traits.role_in_every_delta and delta:
            delta = {"role": "assistant", **delta}
        choice: dict[str, Any] = {"index": 0, "delta": delta}
        if self.traits.logprobs_null:
            choice["logprobs"] = None
        choice["finish_reason"] = finish_reason
        return self.envelope([choice])

    def endless(self, fault: str) -> Iterator[dict[str, Any]]:
        """The chunks of an `endless_*` fault: a server or model that never stops composing
        tool calls. Capped at ENDLESS_CAP chunks, so a client that never cuts still ends."""
        opening = {"index": 0, "id": "call_endless", "type": "function"}
        if fault != "endless_new_calls":
            function = {
                "name": "echo",
                "arguments": '{"text": "' * (fault == "endless_tiny_arguments"),
            }
            yield self.delta_chunk({"tool_calls": [{**opening, "function": function}]})
        # one character a chunk of "1 2 3 … 10 11 …": never a repeated pattern
        characters = itertools.chain.from_iterable(f"{n} " for n in itertools.count(1))
        for n in range(1, ENDLESS_CAP + 1):
            if fault == "endless_new_calls":
                call = {"index": n, "id": f"call_{n}", "type": "function",
                        "function": {"name": "echo", "arguments": "{}"}}  # fmt: skip
            else:
                piece = next(characters) if fault == "endless_tiny_arguments" else ""
                call = {"index": 0, "function": {"arguments": piece}}
            yield self.delta_chunk({"tool_calls": [call]})

    def tool_call_deltas(self, reply: Reply) -> list[dict[str, Any]]:
        deltas: list[dict[str, Any]] = []
        for position, call in enumerate(reply.tool_calls):
            index = 0 if self.traits.tool_calls_at_index_zero else position
            call_id = self.context.call_ids[position]
            arguments = call.arguments_text()
            opening = {"index": index, "id": call_id, "type": "function"}
            if self.traits.whole_tool_calls:
                function = {"name": call.name, "arguments": arguments}
                deltas.append({"tool_calls": [{**opening, "function": function}]})
                continue
            function = {"name": call.name, "arguments": ""}
            deltas.append({"tool_calls": [{**opening, "function": function}]})
            for piece in _pieces(arguments, reply.chunk_size):
                fragment: dict[str, Any] = {"index": index}
                if self.traits.empty_name_in_later_fragments:
                    fragment["id"] = ""
                    fragment["type"] = "function"
                    fragment["function"] = {"name": "", "arguments": piece}
                else:
                    fragment["function"] = {"arguments": piece}
                deltas.append({"tool_calls": [fragment]})
        return deltas

    def plan(self, reply: Reply, usage: dict[str, Any]) -> StreamPlan:
        """Every chunk of a well-behaved stream, in order, split in the middle."""
        traits = self.traits
        opening: list[dict[str, Any]] = []
        if traits.opening_role_chunk:
            opening.append(
                self.delta_chunk({"role": "assistant", "content": traits.opening_content})
            )
        deltas: list[dict[str, Any]] = [{"content": ""}] * reply.empty_deltas
        for piece in _pieces(reply.reasoning, reply.chunk_size):
            deltas.append({traits.reasoning_field: piece})
        paused_at = len(deltas)
        if reply.pause:  # the pieces are cut at the pause
            deltas += [{"content": piece} for piece in _pieces(reply.text[: reply.pause_after],
                                                               reply.chunk_size)]  # fmt: skip
            paused_at = len(deltas)
            deltas += [{"content": piece} for piece in _pieces(reply.text[reply.pause_after :],
                                                               reply.chunk_size)]  # fmt: skip
        else:
            deltas += [{"content": piece} for piece in _pieces(reply.text, reply.chunk_size)]
        deltas.extend(self.tool_call_deltas(reply))
        chunks: list[Event] = [self.delta_chunk(delta) for delta in deltas]
        if reply.pause:
            chunks.insert(paused_at, float(reply.pause))
        middle = (len(chunks) + 1) // 2
        return StreamPlan([*opening, *chunks[:middle]], chunks[middle:], self.ending(reply, usage))

    def ending(self, reply: Reply, usage: dict[str, Any]) -> list[dict[str, Any]]:
        traits = self.traits
        finish = self.delta_chunk({}, reply.effective_finish_reason())
        ending = [finish]
        options = self.context.request.get("stream_options") or {}
        asked = isinstance(options, dict) and bool(options.get("include_usage"))
        placement = traits.usage_placement
        if placement == "on_finish_chunk":
            finish["usage"] = usage
        elif placement == "always_separate" or asked:
            ending.append({**self.envelope([]), "usage": usage})
        if traits.sends_timings or reply.timings is not None:
            ending[-1]["timings"] = {**_timings(usage), **(reply.timings or {})}
        return ending

    def completion(self, reply: Reply, usage: dict[str, Any]) -> dict[str, Any]:
        """The whole reply as one non-streamed `chat.completion` object."""
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.reasoning:
            message[self.traits.reasoning_field] = reply.reasoning
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": self.context.call_ids[position],
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for position, call in enumerate(reply.tool_calls)
            ]
        completion: dict[str, Any] = {
            "id": self.context.completion_id,
            "object": "chat.completion",
            "created": self.context.created,
            "model": self.context.model,
        }
        if self.traits.system_fingerprint is not None:
            completion["system_fingerprint"] = self.traits.system_fingerprint
        completion["choices"] = [
            {"index": 0, "message": message, "finish_reason": reply.effective_finish_reason()}
        ]
        completion["usage"] = usage
        if self.traits.sends_timings or reply.timings is not None:
            completion["timings"] = {**_timings(usage), **(reply.timings or {})}
        return completion


def sse_event(payload: dict[str, Any] | str) -> bytes:
    """One `data:` event; a str is sent verbatim (for `[DONE]` and malformed chunks)."""
    if isinstance(payload, str):
        body = payload
    else:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return b"data: " + body.encode("utf-8") + b"\n\n"
