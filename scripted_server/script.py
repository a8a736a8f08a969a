"""The script a ScriptedServer plays: one `Reply` per model call, loadable from JSON or YAML.

Kept apart from the HTTP code so a test reads what the model "says" without reading sockets.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

#: Every dialect the server speaks (see wire.py for what each one changes on the wire).
DIALECTS = ("openai", "ollama", "llamacpp", "llamacpp_legacy", "lmstudio", "vllm")

#: Every fault a Reply may ask for (see the package docstring for what the client does).
FAULTS = (
    "no_done",
    "error_event",
    "malformed_chunk",
    "disconnect",
    # streams that never end (until the client hangs up, or `ENDLESS_CAP` chunks):
    "endless_new_calls",  # a new tiny tool call in every chunk
    "endless_empty_arguments",  # one call, then `"arguments": ""` in every chunk
    "endless_tiny_arguments",  # one call whose arguments grow by a few characters a chunk
)


class ScriptError(ValueError):
    """A script file or a Reply that cannot be played, phrased for the person who wrote it."""


@dataclass
class ToolCall:
    """One tool call the scripted model makes.

    `arguments` given as a str is sent verbatim (to script malformed JSON); a dict is dumped.
    """

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        """The arguments exactly as they travel on the wire."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class Reply:
    """What the scripted model answers to one chat-completions request."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    #: Default: "tool_calls" when there are tool calls, else "stop".
    finish_reason: str | None = None
    #: Default: computed from the request and the reply's size (~4 characters a token).
    usage: dict[str, Any] | None = None
    #: llama-server's `timings` object sent with the usage (default: made from the usage, in
    #: the llama.cpp dialects only), e.g. {"cache_n": 900, "prompt_n": 12} for a warm cache.
    timings: dict[str, Any] | None = None
    #: Characters of text, reasoning or tool arguments per streamed chunk.
    chunk_size: int = 8
    #: Seconds between chunks, so a test can interrupt mid-stream.
    delay: float = 0.0
    #: Overrides the server's dialect for this reply only.
    dialect: str | None = None
    fault: str | None = None
    #: Answer with this HTTP status and JSON body instead of a completion.
    status: int | None = None
    error_body: dict[str, Any] | None = None
    #: Seconds to wait before the first byte (longer than the client's timeout = a timeout).
    stall: float = 0.0
    #: Extra response headers (e.g. {"retry-after-ms": "10"} to make a client retry fast).
    headers: dict[str, str] | None = None
    #: Chunks with an empty delta sent before the content (a server streaming nothing).
    empty_deltas: int = 0
    #: Seconds the stream stops for once `pause_after` characters of text are sent (a model
    #: pausing mid-answer, mid-line even); then it goes on.
    pause: float = 0.0
    pause_after: int = 0

    def __post_init__(self) -> None:
        if self.dialect is not None and self.dialect not in DIALECTS:
            raise ScriptError(f"unknown dialect {self.dialect!r}; known: {', '.join(DIALECTS)}")
        if self.fault is not None and self.fault not in FAULTS:
            raise ScriptError(f"unknown fault {self.fault!r}; known: {', '.join(FAULTS)}")
        if self.chunk_size < 1:
            raise ScriptError(f"chunk_size must be at least 1, not {self.chunk_size}")
        if self.pause and not 0 < self.pause_after < len(self.text):
            raise ScriptError(f"pause_after must fall inside the text, not {self.pause_after}")
        self.tool_calls = [_tool_call_from(item) for item in self.tool_calls]

    def effective_finish_reason(self) -> str:
        """The finish_reason the stream ends with."""
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.tool_calls else "stop"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        """Build a Reply from one entry of a script file, naming any unknown key."""
        if not isinstance(data, dict):
            raise ScriptError(f"a reply must be a mapping, not {type(data).__name__}: {data!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ScriptError(f"unknown reply key(s) {', '.join(unknown)}; known: {sorted(known)}")
        return cls(**data)


def _tool_call_from(item: ToolCall | dict[str, Any]) -> ToolCall:
    """Accept the dict form a script file uses for a tool call."""
    if isinstance(item, ToolCall):
        return item
    if isinstance(item, dict) and "name" in item:
        extra = sorted(set(item) - {"name", "arguments", "id"})
        if extra:
            raise ScriptError(f"unknown tool call key(s) {', '.join(extra)} in {item!r}")
        return ToolCall(item["name"], item.get("arguments", {}), item.get("id"))
    raise ScriptError(f"a tool call needs at least a name: {item!r}")


def load_script(path: str | Path) -> list[Reply]:
    """Read a JSON or YAML file holding a list of replies."""
    source = Path(path)
    text = source.read_text(encoding="utf-8")
    if source.suffix.lower() == ".json":
        data = json.loads(text)
    else:
        import yaml  # only the by-hand CLI needs it

        data = yaml.safe_load(text)
    if not isinstance(data, list):
        raise ScriptError(f"{source}: the script must be a list of replies")
    replies = []
    for number, entry in enumerate(data, start=1):
        try:
            replies.append(Reply.from_dict(entry))
        except (ScriptError, TypeError) as error:
            raise ScriptError(f"{source}: reply {number}: {error}") from None
    return replies
