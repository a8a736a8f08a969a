"""Assembly of a streamed chat completion into text, reasoning, tool calls and usage (SPEC §3).

Servers disagree on how they stream tool calls; the rules below make every dialect assemble the
same calls:
- fragments are grouped by `index`; a new non-empty `id` at a used index opens a new call
  (Ollama sends every call whole at index 0);
- an empty name never overwrites a name (LM Studio repeats `"name": ""` on later fragments);
- empty arguments mean `{}`; a missing id is made up;
- usage may arrive in a final chunk with no choices (llama-server);
- reasoning arrives as `reasoning_content` (llama-server, LM Studio) or `reasoning` (vLLM).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.prompt_reuse import reuse_of
from mm_tui.agent.usage_report import ReportedUsage, read_usage, timings_prompt


def _get(obj: Any, name: str, default: Any = None) -> Any:
    """Read a field from an SDK object (extra fields included) or from a plain dict."""
    if isinstance(obj, dict):
        return obj.get(name, default)
    value = getattr(obj, name, None)
    if value is None:
        extra = getattr(obj, "model_extra", None) or {}
        value = extra.get(name)
    return default if value is None else value


class AssembledCall:
    """One tool call as assembled from its fragments; `arguments` is the raw JSON text.

    Fragments are kept as a list (joined on demand) with a short tail, so that a 256 KB
    runaway costs linear time, not quadratic.
    """

    TAIL = 512  # characters kept for the runaway watch, which looks at the last 256
    PARTS = 4096  # pieces kept apart before they are joined

    def __init__(
        self,
        id: str,
        name: str = "",
        arguments: str = "",
        index: int = 0,
        badge: str = "",
        raw: str = "",
        not_run: str = "",
    ) -> None:
        self.id = id
        self.name = name
        self.index = index
        self.badge = badge  # how the call was obtained when not natively (repaired, from text)
        self.raw = raw  # the text it was read from, shown one key away on the row
        self.not_run = not_run  # why the call must not run (e.g. the reply was cut inside it)
        self._parts: list[str] = []
        self.tail = ""
        self.length = 0
        self.size_bytes = 0
        self.fragments = 0  # the argument fragments it came in, empty ones too
        self.name_set = False  # whether its last fragment gave it its name
        self.last_fragment = ""
        if arguments:
            self.add(arguments)

    def add(self, fragment: str) -> None:
        self.fragments += 1
        if not fragment:  # nothing to keep (a server may send `"arguments": ""` forever)
            self.last_fragment = ""
            return
        parts = self._parts
        parts.append(fragment)
        if len(parts) >= self.PARTS:  # thousands of tiny pieces: one string, not a list of them
            parts[:] = ["".join(parts)]
        self.tail = (self.tail + fragment)[-self.TAIL :]
        self.length += len(fragment)
        self.size_bytes += len(fragment.encode("utf-8", "replace"))
        self.last_fragment = fragment

    @property
    def arguments(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def __repr__(self) -> str:
        return f"AssembledCall(id={self.id!r}, name={self.name!r}, length={self.length})"


@dataclass
class StreamDelta:
    """What one chunk added, for the events the turn loop emits while streaming."""

    text: str = ""
    reasoning: str = ""
    tool_call: AssembledCall | None = None  # the call whose arguments grew, if any
    #: Whether the tool-call fragments brought anything: a new call, a name, some arguments.
    call_progress: bool = False


class StreamAssembler:
    """Feed it chunks in order; read `text`, `reasoning`, `calls`, `usage`, `finish_reason`.

    The text and the reasoning are kept as pieces, joined when read: growing one string a
    token at a time copies the whole answer per token (a 256 KB answer: gigabytes).
    """

    def __init__(self) -> None:
        self._text: list[str] = []
        self._reasoning: list[str] = []
        self.calls: list[AssembledCall] = []
        self.usage: tuple[int, int] | None = None  # (prompt, completion) as reported
        self.reported: ReportedUsage | None = None
        #: (tokens reused from the server's cache, tokens of the prompt), when it says.
        self.reuse: tuple[int, int] | None = None
        self.timings_prompt: int | None = None  # llama-server's whole prompt, from `timings`
        self.finish_reason: str | None = None
        self._by_index: dict[int, AssembledCall] = {}
        self.calls_bytes = 0  # the arguments of all its calls together

    @property
    def text(self) -> str:
        return _joined(self._text)

    def _read_usage(self, usage: Any) -> None:
        """A chunk's `usage`; garbage in it is ignored (`usage_report`), never an error."""
        reported = read_usage(usage)
        if reported is not None:
            self.reported = reported
            self.usage = (reported.prompt, reported.completion)

    @property
    def reasoning(self) -> str:
        return _joined(self._reasoning)

    def feed(self, chunk: Any) -> StreamDelta:
        # A chunk read from the wire is plain dicts: read with `dict.get` (this runs per
        # token); an SDK object goes through `_get`.
        delta_out = StreamDelta()
        plain = type(chunk) is dict
        usage = chunk.get("usage") if plain else _get(chunk, "usage")
        if usage:
            self._read_usage(usage)
        if plain and (usage or "timings" in chunk):
            self.reuse = reuse_of(chunk) or self.reuse
        timings = chunk.get("timings") if plain else _get(chunk, "timings")
        if timings:
            self.timings_prompt = timings_prompt(timings)
        for choice in (chunk.get("choices") if plain else _get(chunk, "choices")) or ():
            if type(choice) is dict:
                reason, delta = choice.get("finish_reason"), choice.get("delta")
            else:
                reason, delta = _get(choice, "finish_reason"), _get(choice, "delta")
            if reason and reason != "null":  # KoboldCpp 1.76 writes the string "null"
                self.finish_reason = reason
            if delta is None:
                continue
            if type(delta) is dict:
                reasoning = delta.get("reasoning_content") or delta.get("reasoning") or ""
                content = delta.get("content") or ""
                fragments = delta.get("tool_calls") or ()
            else:
                reasoning = _get(delta, "reasoning_content") or _get(delta, "reasoning") or ""
                content = _get(delta, "content") or ""
                fragments = _get(delta, "tool_calls") or ()
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
                delta_out.reasoning += reasoning
            if isinstance(content, str) and content:
                self._text.append(content)
                delta_out.text += content
            for fragment in fragments:
                opened = len(self.calls)
                call = delta_out.tool_call = self._feed_tool_call(fragment)
                if len(self.calls) != opened or call.last_fragment or call.name_set:
                    delta_out.call_progress = True
        return delta_out

    def feed_text(self, chunk: dict[str, Any]) -> str:
        """The usual chunk, a piece of the answer and nothing else (one choice, no finish, no
        usage, a delta with only `content` besides a role or empty fields): its text, taken as
        `feed` takes it; "" for any other chunk, which is left untouched for `feed`. It saves
        `feed`'s general walk on the chunks that are most of a stream (CPU the model needs)."""
        choices = chunk.get("choices")
        if type(choices) is not list or len(choices) != 1 or chunk.get("usage"):
            return ""
        choice = choices[0]
        if type(choice) is not dict or choice.get("finish_reason"):
            return ""
        delta = choice.get("delta")
        if type(delta) is not dict:
            return ""
        content = delta.get("content")
        if type(content) is not str or not content:
            return ""
        if len(delta) > 1 and (
            delta.get("reasoning_content") or delta.get("reasoning") or delta.get("tool_calls")
        ):
            return ""
        self._text.append(content)
        return content

    def _feed_tool_call(self, fragment: Any) -> AssembledCall:
        index = _get(fragment, "index")
        index = int(index) if isinstance(index, int) else len(self._by_index)
        call_id = _get(fragment, "id") or ""
        function = _get(fragment, "function") or {}
        name = _get(function, "name") or ""
        arguments = _get(function, "arguments")
        current = self._by_index.get(index)
        if current is None or (call_id and current.id and call_id != current.id):
            current = AssembledCall(id=call_id or made_up_id(), index=index)
            self._by_index[index] = current
            self.calls.append(current)
        current.name_set = bool(name and not current.name)
        if current.name_set:
            current.name = name
        size = current.size_bytes
        if isinstance(arguments, dict):  # some servers send an object instead of a string
            import json

            current.add(json.dumps(arguments))
        elif isinstance(arguments, str):
            current.add(arguments)
        else:
            current.last_fragment = ""
        self.calls_bytes += current.size_bytes - size
        return current

    @property
    def was_cut(self) -> bool:
        """A stream that ended without a finish_reason was cut (SPEC §3)."""
        return self.finish_reason is None


def _joined(pieces: list[str]) -> str:
    """The pieces as one string, kept joined (the next read costs nothing)."""
    if len(pieces) > 1:
        pieces[:] = ["".join(pieces)]
    return pieces[0] if pieces else ""


def made_up_id() -> str:
    return f"call_{uuid.uuid4().hex[:12]}"
