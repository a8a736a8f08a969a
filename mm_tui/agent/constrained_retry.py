"""The last rung of the call ladder: when a reply holds a call the reader cannot repair, the
same request goes to the same server once more with the call's schema as a grammar, so the
server itself can only write a call that reads; only when that fails is the model told.

The grammar travels as OpenAI's `response_format: {"type": "json_schema", ...}`, which every
server we speak to reads (checked in their sources):
- llama-server (`tools/server`): turned into a grammar (`json_schema`); it refuses a custom
  grammar beside `tools`, so the retry describes the tools in the prompt instead;
- vLLM (`entrypoints/openai/protocol.py`): structured outputs (formerly `guided_json`);
- LM Studio: structured output over its OpenAI endpoint;
- Ollama (`openai/openai.go`, since 0.5.0): turned into its `format` (a JSON schema).
An unknown server is tried once: a 400 or 422 answer (or one naming the field) marks it as
unable for the session, and the model is told what failed as before. So does an answer that
is not JSON at all, cut by nothing: a server held to a schema writes nothing else, so this one
dropped the field (mlx_lm.server, text-generation-webui, llamafile and KoboldCpp before
structured outputs read no `response_format`, and say nothing).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.messages import ChatRequest, ToolSchema
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.repair import NESTED_TOO_DEEPLY, parse_arguments
from mm_tui.agent.server_kind import ServerKind, detect_server, version_at_least
from mm_tui.agent.stream import AssembledCall, StreamAssembler
from mm_tui.agent.text_calls import alternating, describe_tools_for_prompt, to_text_protocol
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.agent.turn_signals import TurnSignals

log = logging.getLogger(__name__)

BADGE_CONSTRAINED = "constrained retry: JSON schema"
RETRY_REFUSED = (
    "the server refused a JSON-schema grammar ({why}) — calls it cannot read go back to the "
    "model from now on"
)
RETRY_UNREADABLE = "a constrained retry did not give a readable call ({why}) — the model is told"
RETRY_IGNORED = (
    "the server ignored a JSON-schema grammar (it answered free text) — calls it cannot read "
    "go back to the model from now on"
)
RETRY_USED = "the call to {name} could not be read: asked again with its schema as a grammar"
#: Tokens a retry's answer may take beyond the length of the call as first written.
RETRY_ROOM = 256
#: Ollama's OpenAI endpoint reads `response_format` json_schema from this version on.
OLLAMA_SCHEMA_SINCE = (0, 5, 0)
_REFUSAL_WORDS = ("response_format", "json_schema", "grammar", "structured")


def call_schema(tools: list[ToolSchema], name: str | None) -> dict[str, Any]:
    """`{"name": <the tool>, "arguments": <its parameters>}` as a JSON schema: the one tool
    named when it is declared, else any declared tool with its own parameters."""
    functions = [tool["function"] for tool in tools if "function" in tool]
    chosen = [f for f in functions if f["name"] == name] or functions

    def one(function: dict[str, Any]) -> dict[str, Any]:
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        return {
            "type": "object",
            "properties": {
                "name": {"type": "string", "enum": [function["name"]]},
                "arguments": parameters,
            },
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }

    if len(chosen) == 1:
        return one(chosen[0])
    return {"anyOf": [one(function) for function in chosen]}


def grammar_field(schema: dict[str, Any]) -> dict[str, object]:
    """The `response_format` that carries the schema."""
    wrapper = {"name": "tool_call", "strict": True, "schema": schema}
    return {"type": "json_schema", "json_schema": wrapper}


@dataclass
class RetryOutcome:
    """What a retry did: the line to say, and the tokens it cost."""

    notice: str = ""
    usage: tuple[int, int] | None = None


class ConstrainedRetry:
    """One per session: knows whether the server takes a JSON-schema grammar."""

    def __init__(self, base_url: str, detect: Callable[[str], ServerKind] = detect_server) -> None:
        self.base_url = base_url
        self._detect = detect
        self.kind: ServerKind | None = None
        #: None: not known yet; False once the server refused (or cannot, by its version).
        self.supported: bool | None = None

    def server(self) -> ServerKind:
        """What answers at the base URL, asked once (the prompt's count reads it too)."""
        if self.kind is None:
            self.kind = self._detect(self.base_url)
        return self.kind

    def usable(self) -> bool:
        """Whether to try: the server is asked what it is the first time."""
        if self.supported is None:
            self.kind = self.server()
            if self.kind.name == "ollama" and not version_at_least(
                self.kind.version, OLLAMA_SCHEMA_SINCE
            ):
                self.supported = False
        return self.supported is not False

    @staticmethod
    def broken(calls: list[AssembledCall], registry: ToolRegistry) -> int | None:
        """The first call of a declared tool whose arguments no repair could read. Arguments
        nested past the reader's depth are no slip a grammar mends (the model built them so):
        they are answered as a plain error, with no second request."""
        for position, call in enumerate(calls):
            tool = registry.resolve(call.name)
            if call.not_run or tool is None:
                continue
            parsed = parse_arguments(call.arguments, tool.parameters)
            if parsed.arguments is None and parsed.error != NESTED_TOO_DEEPLY:
                return position
        return None

    def mend(
        self,
        client: ModelClient,
        signals: TurnSignals,
        request: ChatRequest,
        calls: list[AssembledCall],
        registry: ToolRegistry,
    ) -> RetryOutcome:
        """At most one retry for this reply: the first unreadable call replaced, in place,
        by the one the grammar held the server to; nothing changed when it did not help."""
        position = self.broken(calls, registry)
        if position is None or not self.usable():
            return RetryOutcome()
        call = calls[position]
        tool = registry.resolve(call.name)
        name = tool.name if tool is not None else None
        tools = registry.schemas()
        retry = self.request(request, tools, name, len(call.raw or call.arguments))
        assembler = StreamAssembler()

        def take(chunks: list[dict[str, Any]]) -> bool:
            for chunk in chunks:
                assembler.feed(chunk)
            return False

        log.debug("constrained retry for %s (server: %s)", name, self.kind)
        try:
            client.stream(retry, signals.cancel, take)
        except Interrupted:
            log.debug("the constrained retry was interrupted", exc_info=True)
            return RetryOutcome()  # the cancel flag stays set: the runner answers the calls
        except ModelFault as fault:
            log.debug("the constrained retry failed", exc_info=True)
            said = f"{fault.message} {fault.body}".lower()
            if fault.status in (400, 422) or any(word in said for word in _REFUSAL_WORDS):
                self.supported = False
                return RetryOutcome(RETRY_REFUSED.format(why=fault.message))
            return RetryOutcome(RETRY_UNREADABLE.format(why=fault.message))
        self.supported = True
        found = read_constrained(assembler.text, registry)
        if found is None and ignored(assembler):
            log.debug("constrained answer is free text: %.400r", assembler.text)
            self.supported = False
            return RetryOutcome(RETRY_IGNORED, assembler.usage)
        if found is None:
            cut = assembler.finish_reason == "length"  # a grammar bounds the shape, not the size
            why = "it was cut at the token limit" if cut else "its answer did not fit the schema"
            log.debug("constrained answer not read (%s): %.400r", why, assembler.text)
            return RetryOutcome(RETRY_UNREADABLE.format(why=why), assembler.usage)
        raw = call.raw or call.arguments
        calls[position] = AssembledCall(
            call.id, found[0], json.dumps(found[1], ensure_ascii=False), call.index,
            BADGE_CONSTRAINED, raw,
        )  # fmt: skip
        return RetryOutcome(RETRY_USED.format(name=found[0]), assembler.usage)

    @staticmethod
    def request(
        request: ChatRequest, tools: list[ToolSchema], name: str | None, written: int = 0
    ) -> ChatRequest:
        """The same request with the grammar; native tools described in the prompt instead
        (llama-server refuses a grammar beside `tools`). A grammar holds the shape, not the
        size: a small model under one can write a string or an array on until the context is
        full (seen on a real llama-server), so the answer gets `max_tokens`: room for the
        call as the model first wrote it (`written` characters, at least a token each) and
        `RETRY_ROOM` more, or the request's own bound where it is smaller."""
        retry = request.copy()
        if retry.pop("tools", None) is not None:
            described = to_text_protocol(request["messages"], describe_tools_for_prompt(tools))
            retry["messages"] = alternating(described)
        retry["response_format"] = grammar_field(call_schema(tools, name))
        bound = written + RETRY_ROOM
        own = request.get("max_tokens")
        retry["max_tokens"] = min(own, bound) if isinstance(own, int) and own > 0 else bound
        return retry


def ignored(assembler: StreamAssembler) -> bool:
    """Whether the answer shows the grammar was dropped: whole, and not even JSON's start."""
    opening = assembler.text.lstrip()[:1]
    return assembler.finish_reason != "length" and opening not in ("{", "[")


def read_constrained(text: str, registry: ToolRegistry) -> tuple[str, dict[str, Any]] | None:
    """The call a grammar-held answer holds: a declared name and object arguments."""
    try:
        value = json.loads(text)
    except ValueError:
        log.debug("the constrained answer is not JSON", exc_info=True)
        return None
    if not isinstance(value, dict):
        return None
    name, arguments = value.get("name"), value.get("arguments")
    tool = registry.resolve(name) if isinstance(name, str) else None
    if tool is None or not isinstance(arguments, dict):
        return None
    return tool.name, arguments
