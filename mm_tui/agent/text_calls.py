"""Tool calls written in the answer's text (read by the class reader of `agent/calls/`), and the
text protocol that describes the tools in the prompt for models the server cannot give tools to.

The reading itself lives in `mm_tui.agent.calls` (one module per class of what models write);
this module keeps the names the core has always used.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mm_tui.agent.calls import read_calls
from mm_tui.agent.calls.jsonish import close_json
from mm_tui.agent.calls.model import (
    BADGE_REASONING,
    BADGE_TEXT_BARE,
    BADGE_TEXT_FENCE,
    BADGE_TEXT_INVOKE,
    BADGE_TEXT_PYTHONIC,
    BADGE_TEXT_TAG,
    BADGE_TEXT_TOKENS,
    BADGE_TEXT_XML,
    TextCall,
    TextCalls,
    clean_tool_name,
)
from mm_tui.agent.messages import ChatRequest, ContentPart, Message, text_of

__all__ = [
    "BADGE_REASONING",
    "BADGE_TEXT_BARE",
    "BADGE_TEXT_FENCE",
    "BADGE_TEXT_INVOKE",
    "BADGE_TEXT_PYTHONIC",
    "BADGE_TEXT_TAG",
    "BADGE_TEXT_TOKENS",
    "BADGE_TEXT_XML",
    "TextCall",
    "TextCalls",
    "clean_tool_name",
    "close_json",
    "alternating",
    "describe_tools_for_prompt",
    "extract_text_calls",
    "to_text_protocol",
    "tools_ignored",
]


def extract_text_calls(
    text: str,
    is_declared: Callable[[str], bool],
    *,
    finished: bool = True,
    reasoning: bool = False,
) -> TextCalls:
    """Find tool calls written in `text` (see `mm_tui.agent.calls.policy` for which count)."""
    return read_calls(text, is_declared, finished=finished, reasoning=reasoning)


# -- the text protocol: tools described in the prompt, results sent as user messages --------

TEXT_PROTOCOL_INTRO = """\

# Tools
You can use the tools below. To call a tool, write exactly one block like this and stop:
<tool_call>
{{"name": "<tool name>", "arguments": {{<the arguments as JSON>}}}}
</tool_call>
Example: <tool_call>{{"name": "{example}", "arguments": {example_args}}}</tool_call>
The result comes back in a <tool_response> block. Call one tool at a time.

Available tools:
"""


def describe_tools_for_prompt(schemas: list[dict[str, Any]]) -> str:
    """The tools as text, appended to the system prompt in text mode."""
    if not schemas:
        return ""
    first = schemas[0]["function"]
    example_args = {key: "..." for key in first.get("parameters", {}).get("required", [])[:1]} or {}
    lines = [
        TEXT_PROTOCOL_INTRO.format(example=first["name"], example_args=json.dumps(example_args))
    ]
    for schema in schemas:
        function = schema["function"]
        params = json.dumps(function.get("parameters", {}), ensure_ascii=False)
        lines.append(f"## {function['name']}\n{function['description']}\nParameters: {params}\n")
    return "\n".join(lines)


def to_text_protocol(messages: list[Message], tools_text: str) -> list[Message]:
    """The history as a model without native tools reads it: calls written as <tool_call>
    blocks in the assistant's text, results as user messages in <tool_response> blocks."""
    out: list[Message] = []
    for message in messages:
        role = message["role"]
        if role == "system":
            out.append({"role": "system", "content": text_of(message.get("content")) + tools_text})
        elif role == "assistant" and (calls := message.get("tool_calls")):
            blocks = [
                "<tool_call>\n"
                + json.dumps(
                    {
                        "name": call["function"]["name"],
                        "arguments": _loads_or_raw(call["function"]["arguments"]),
                    },
                    ensure_ascii=False,
                )
                + "\n</tool_call>"
                for call in calls
            ]
            text = "\n".join(filter(None, [text_of(message.get("content")), *blocks]))
            out.append({"role": "assistant", "content": text})
        elif role == "tool":
            block = f"<tool_response>\n{message.get('content', '')}\n</tool_response>"
            if out and out[-1]["role"] == "user" and out[-1].get("_results"):
                out[-1]["content"] = text_of(out[-1].get("content")) + "\n" + block
            else:
                out.append({"role": "user", "content": block, "_results": True})
        else:
            kept: Message = {"role": role}
            if "content" in message:
                kept["content"] = message["content"]
            out.append(kept)
    for message in out:
        message.pop("_results", None)
    return out


#: The tools must be worth this many tokens for their absence to be told from noise.
TOOLS_MIN_TOKENS = 300


def tools_ignored(request: ChatRequest, prompt_tokens: int) -> bool:
    """Whether a server counted the prompt as if the request had no tools: llama-server with a
    chat template that cannot render tools accepts `tools` and silently drops them.
    True when the server's count is near the conversation alone (~4 characters a token) and
    far below it with the tools, and not so low that the prompt was cut instead."""
    messages = len(json.dumps(request.get("messages", []), ensure_ascii=False)) // 4
    tools = len(json.dumps(request.get("tools", []), ensure_ascii=False)) // 4
    if tools < TOOLS_MIN_TOKENS or prompt_tokens <= 0:
        return False
    return messages * 0.5 <= prompt_tokens < messages + tools * 0.3


def alternating(messages: list[Message]) -> list[Message]:
    """The messages with no two user (or two plain assistant) messages in a row, as chat
    templates that demand alternation need (Gemma's rejects the request otherwise): after a
    failed or interrupted turn the history holds a user message with no answer, and the next
    request would send two. Neighbours of one role are joined; the history itself is kept."""
    out: list[Message] = []
    for message in messages:
        previous = out[-1] if out else None
        role = message.get("role")
        if (
            previous is not None
            and role in ("user", "assistant")
            and previous.get("role") == role
            and not previous.get("tool_calls")
        ):
            merged = previous | message
            merged["content"] = _joined(previous.get("content"), message.get("content"))
            out[-1] = merged
        else:
            out.append(message)
    return out


def _joined(
    first: str | list[ContentPart] | None, second: str | list[ContentPart] | None
) -> str | list[ContentPart] | None:
    if isinstance(first, list) or isinstance(second, list):
        parts: list[ContentPart] = []
        for content in (first, second):
            if isinstance(content, list):
                parts += content
            elif content:
                parts.append({"type": "text", "text": content})
        return parts
    return "\n\n".join(part for part in (first, second) if part) or None


def _loads_or_raw(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except (TypeError, ValueError):
        return arguments
