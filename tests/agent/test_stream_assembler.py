"""The stream's assembly reads a chunk parsed from the wire (plain dicts, read with `dict.get`
since it runs per token) and an SDK object alike."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from mm_tui.agent.stream import StreamAssembler

CHUNKS: list[dict[str, Any]] = [
    {"choices": [{"delta": {"role": "assistant", "content": None}}]},
    {"choices": [{"delta": {"reasoning_content": "think "}}]},
    {"choices": [{"delta": {"reasoning": "more"}}]},
    {"choices": [{"delta": {"content": "Hello"}}]},
    {"choices": [{"delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "function": {"name": "echo", "arguments": '{"te'}}]}}]},
    {"choices": [{"delta": {"tool_calls": [
        {"index": 0, "function": {"name": "", "arguments": 'xt": 1}'}}]}}]},
    {"choices": [{"delta": {}, "finish_reason": "tool_calls"}]},
    {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 7}},
    {"choices": ["not a choice", {"delta": "not a delta"}]},
]  # fmt: skip


def as_object(value: Any) -> Any:
    """`value` as the SDK's objects: attributes, and a field it does not know (`reasoning`,
    `reasoning_content`) in `model_extra`."""
    if isinstance(value, list):
        return [as_object(item) for item in value]
    if not isinstance(value, dict):
        return value
    extra = {k: v for k, v in value.items() if k.startswith("reasoning")}
    known = {k: as_object(v) for k, v in value.items() if k not in extra}
    return SimpleNamespace(**known, model_extra=extra)


def assembled(chunks: list[Any]) -> tuple[Any, ...]:
    assembler = StreamAssembler()
    deltas = [assembler.feed(chunk) for chunk in chunks]
    calls = [(c.id, c.name, c.arguments, c.index) for c in assembler.calls]
    said = [(d.text, d.reasoning, d.tool_call is not None) for d in deltas]
    return (
        assembler.text,
        assembler.reasoning,
        calls,
        assembler.usage,
        assembler.finish_reason,
        said,
    )


def test_plain_dicts_and_sdk_objects_assemble_the_same() -> None:
    from_dicts = assembled(CHUNKS)

    assert from_dicts[:5] == (
        "Hello",
        "think more",
        [("call_1", "echo", '{"text": 1}', 0)],
        (12, 7),
        "tool_calls",
    )
    assert from_dicts == assembled([as_object(chunk) for chunk in CHUNKS])
