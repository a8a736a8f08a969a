"""The chat messages of a conversation, as the model is sent them and the session file keeps
them: one `Message` shape for every role, its keys those of the OpenAI chat API; and the chat
request that carries them (`ChatRequest`).

Why not the `openai` package's own `ChatCompletionMessageParam`: it is a union of six
role-specific TypedDicts whose `tool_calls` and `content` are `Iterable`s, so every read of a
message (here: `len`, indexing, `.get("tool_calls")` on any role) would first narrow the union;
messages read back from a session file are plain JSON objects of any role; and ours carry a key
the package does not declare (`reasoning_content`, which llama-server reads back). The tool call
is the package's shape (`ChatCompletionMessageFunctionToolCallParam`), written here because its
name moved between the package's versions that `pyproject.toml` allows.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal, Required, TypedDict, cast

Role = Literal["system", "user", "assistant", "tool"]

#: One part of a content given as a list (`{"type": "text", "text": ...}`, an image): the API
#: allows it; mm-tui writes plain text, and joins parts it finds (`text_calls.alternating`).
ContentPart = dict[str, object]


class ToolCallFunction(TypedDict):
    name: str
    arguments: str  # JSON text, as the model wrote it (repaired when it was not JSON)


class ToolCall(TypedDict):
    """One call in an assistant message's `tool_calls`."""

    id: str
    type: Literal["function"]
    function: ToolCallFunction


class Message(TypedDict, total=False):
    """One message of the conversation. Which keys are there depends on `role`: `tool_calls`
    on an assistant's, `tool_call_id` on a tool result's."""

    role: Required[Role]
    content: str | list[ContentPart] | None  # None: an assistant message made only of calls
    tool_calls: list[ToolCall]
    tool_call_id: str
    name: str
    reasoning_content: str  # the model's reasoning, kept with its answer
    reasoning: str  # vLLM's name for it, in sessions written from its stream
    _results: bool  # text mode: a user message that carries tool results (never sent)


#: A tool as a request declares it: `{"type": "function", "function": {"name", "description",
#: "parameters"}}`, its parameters a JSON schema (any JSON, hence `Any`).
ToolSchema = dict[str, Any]


class Sampling(TypedDict, total=False):
    """The sampling fields a request may carry (a model family's defaults, or the config's)."""

    temperature: float
    top_p: float
    top_k: int
    min_p: float


class ChatRequest(Sampling, total=False):
    """A streamed `/chat/completions` request as mm-tui sends it."""

    model: Required[str]
    messages: Required[list[Message]]
    tools: list[ToolSchema]
    stream_options: dict[str, bool]
    response_format: dict[str, object]  # the constrained retry's JSON schema
    max_tokens: int


def text_of(content: str | list[ContentPart] | None) -> str:
    """A message's content as text: a list's text parts joined, anything else left out."""
    if isinstance(content, str):
        return content
    if not content:
        return ""
    return "".join(str(part.get("text", "")) for part in content if part.get("type") == "text")


def read_back(value: Mapping[str, object]) -> Message:
    """A JSON object of a session file, taken as the message mm-tui wrote there (its order is
    mended by `session_data.answer_unfinished_calls`; its keys are not checked)."""
    return cast("Message", cast("object", value))


def only_keys(message: Message, keys: Collection[str]) -> Message:
    """A copy of `message` with only `keys` (which name `role`)."""
    return read_back({key: value for key, value in message.items() if key in keys})
