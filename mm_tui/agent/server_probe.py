"""`mm-tui doctor`'s live checks, made before a turn is wasted on them: one short request with a
dummy tool (does the server take tools, does the model call them natively, in text, or not at
all), one short generation (how fast the model writes), and the context the server actually
loaded the model with.

Through the same `ModelClient` a turn uses, so what the probe sees is what a turn will see.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.config import Config
from mm_tui.agent.context import root_url
from mm_tui.agent.messages import ChatRequest, Message, ToolSchema
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.server_check import Finding

log = logging.getLogger(__name__)

PROBE_NAME = "report_check"
PROBE_TOOL: ToolSchema = {
    "type": "function",
    "function": {
        "name": PROBE_NAME,
        "description": "Report that the check worked.",
        "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string", "description": "The word to report."}},
            "required": ["word"],
        },
    },
}
PROBE_MESSAGES: list[Message] = [
    {"role": "system", "content": "You are being tested. Answer by calling the tool given."},
    {"role": "user", "content": f'Call {PROBE_NAME} with the word "ready".'},
]
SPEED_MESSAGES: list[Message] = [
    {"role": "user", "content": "Write the numbers from 1 to 40, one per line."}
]
PROBE_TIMEOUT = 120.0  # a 12B model on a CPU may load for a minute before its first token
#: Below this, a 500-token answer takes over three minutes: said as a warning.
SLOW_TOKENS_PER_SECOND = 3.0

TOOLS_USED = "tool calls: native — {model} called the probe tool"
TOOLS_AS_TEXT = (
    "tool calls: {model} wrote the probe call as text, so the server does not pass tools "
    "natively — mm-tui reads such calls (toolCalls: auto switches to text mode)"
)
TOOLS_IGNORED = (
    "tool calls: {model} did not call the probe tool (it answered {answer}) — the server or "
    "its chat template seems to ignore tools"
)
TOOLS_REFUSED = "tool calls: the server refused a request with tools ({fault})"
PROBE_FAILED = "probe request failed: {fault}"
SPEED_LINE = "generation {speed:.1f} tokens/s, first token after {first:.1f}s"
SPEED_SLOW = (
    " — slow: a 500-token answer takes {minutes:.0f} min; a smaller model or quantisation helps"
)
SERVED_CONTEXT = "context served: {model} is loaded with {tokens} tokens ({source})"
SERVED_SMALLER = (
    "context served: {model} is loaded with {tokens} tokens, less than the {expected} assumed — "
    "set contextWindow: {tokens}, or load it with more"
)


@dataclass
class _Reply:
    text: str = ""
    calls: int = 0
    names: tuple[str, ...] = ()
    first: float | None = None  # seconds to the first piece of text or call
    last: float | None = None
    completion_tokens: int = 0


def tools_fix(base_url: str, ollama: bool) -> str:
    """What makes this server pass tools to the model, by what it is."""
    if ollama:
        return "ollama show MODEL  # choose a model whose Capabilities list `tools`"
    port = _port(base_url)
    if port == 8000:
        return "vllm serve MODEL --enable-auto-tool-choice --tool-call-parser hermes"
    if port == 1234:
        return "lms load MODEL  # a model whose chat template has tools, or toolCalls: text"
    return "llama-server -m MODEL.gguf --jinja  # or set toolCalls: text in .mm.yaml"


def _port(base_url: str) -> int | None:
    from urllib.parse import urlparse

    try:
        return urlparse(base_url).port
    except ValueError:
        return None


def _ask(client: ModelClient, request: ChatRequest) -> _Reply:
    """One streamed request, timed from its sending: text, calls and the pace of writing."""
    from mm_tui.agent.stream import StreamAssembler

    assembler = StreamAssembler()
    reply = _Reply()
    started = time.monotonic()

    def take(chunks: list[dict[str, Any]]) -> bool:
        for chunk in chunks:
            delta = assembler.feed(chunk)
            if delta.text or delta.tool_call is not None:
                now = time.monotonic() - started
                reply.first = now if reply.first is None else reply.first
                reply.last = now
        return False

    client.stream(request, threading.Event(), take)
    reply.text = assembler.text
    reply.calls = len(assembler.calls)
    reply.names = tuple(call.name for call in assembler.calls)
    reply.completion_tokens = assembler.usage[1] if assembler.usage else 0
    if not reply.completion_tokens:
        reply.completion_tokens = max(len(reply.text) // 4, 1)
    return reply


def probe_tools(config: Config, model: str, *, ollama: bool = False) -> Finding:
    """One request with a dummy tool: called natively, written as text, ignored, or refused."""
    from mm_tui.agent.calls import read_calls

    client = ModelClient(config.base_url, config.api_key, timeout=PROBE_TIMEOUT)
    request: ChatRequest = {
        "model": model,
        "messages": PROBE_MESSAGES,
        "tools": [PROBE_TOOL],
        "temperature": 0,
        "max_tokens": 200,
    }
    fix = tools_fix(config.base_url, ollama)
    try:
        reply = _ask(client, request)
    except ModelFault as fault:
        log.debug("the tool probe failed", exc_info=True)
        if fault.status in (400, 422) or "tool" in fault.message.lower():
            return Finding("tools", "problem", TOOLS_REFUSED.format(fault=fault.message), fix)
        return Finding("tools", "problem", PROBE_FAILED.format(fault=fault.message))
    except Interrupted:
        return Finding("tools", "problem", PROBE_FAILED.format(fault="interrupted"))
    if reply.calls:
        return Finding("tools", "ok", TOOLS_USED.format(model=model))
    written = read_calls(reply.text, lambda name: name == PROBE_NAME).calls
    if written:
        return Finding("tools", "warning", TOOLS_AS_TEXT.format(model=model), fix)
    answer = _quoted_start(reply.text)
    return Finding("tools", "warning", TOOLS_IGNORED.format(model=model, answer=answer), fix)


def _quoted_start(text: str) -> str:
    words = " ".join(text.split())
    if not words:
        return "nothing"
    return f"“{words[:60]}{'…' if len(words) > 60 else ''}”"


def probe_speed(config: Config, model: str) -> Finding:
    """How fast the model writes, from a short answer: tokens after the first, per second."""
    client = ModelClient(config.base_url, config.api_key, timeout=PROBE_TIMEOUT)
    request: ChatRequest = {
        "model": model,
        "messages": SPEED_MESSAGES,
        "temperature": 0,
        "max_tokens": 120,
    }
    try:
        reply = _ask(client, request)
    except (ModelFault, Interrupted) as fault:
        log.debug("the speed probe failed", exc_info=True)
        return Finding("speed", "problem", PROBE_FAILED.format(fault=fault))
    if reply.first is None or reply.last is None:
        return Finding("speed", "warning", PROBE_FAILED.format(fault="the model wrote nothing"))
    writing = max(reply.last - reply.first, 1e-3)
    speed = max(reply.completion_tokens - 1, 1) / writing
    text = SPEED_LINE.format(speed=speed, first=reply.first)
    if speed < SLOW_TOKENS_PER_SECOND:
        minutes = 500 / speed / 60
        return Finding("speed", "warning", text + SPEED_SLOW.format(minutes=minutes))
    return Finding("speed", "ok", text)


def served_context(config: Config, model: str, expected: int, *, timeout: float = 2.0) -> Finding:
    """The context the server actually runs the model with, where it says so — Ollama's
    `/api/ps` (`context_length`, once the probe loaded it), vLLM's and SGLang's `/v1/models`
    (`max_model_len`, labelled by the server that wrote it), LM Studio's
    `/api/v0/models/{model}` (`loaded_context_length`), KoboldCpp's
    `/api/extra/true_max_context_length` (`--contextsize`) — against what mm-tui assumes.
    llama-server's `/props` is already what `check_context` read."""
    for source, tokens in _served_sizes(config.base_url, model, timeout):
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens <= 0:
            continue
        if config.context_window is None and tokens < expected:
            text = SERVED_SMALLER.format(model=model, tokens=tokens, expected=expected)
            return Finding("context", "warning", text)
        return Finding(
            "context", "ok", SERVED_CONTEXT.format(model=model, tokens=tokens, source=source)
        )
    return Finding("context", "ok", "context served: the server does not say")


def _served_sizes(base_url: str, model: str, timeout: float) -> Any:
    """(source, size) for each endpoint that answers, in order, lazily."""
    from mm_tui.agent.context import fetch_json

    root = root_url(base_url)
    asks = [
        ("ollama /api/ps", f"{root}/api/ps", "models", "context_length"),
        ("{owner} max_model_len", f"{base_url.rstrip('/')}/models", "data", "max_model_len"),
        ("lm studio loaded_context_length", f"{root}/api/v0/models", "data",
         "loaded_context_length"),
        ("koboldcpp true_max_context_length", f"{root}/api/extra/true_max_context_length",
         None, "value"),
    ]  # fmt: skip
    for source, url, key, field in asks:
        try:
            answer = fetch_json(url, None, timeout)
        except (OSError, ValueError):
            log.debug("no %s at %s", source, url, exc_info=True)
            continue
        if key is None:  # KoboldCpp's one-value answer: {"value": N}
            yield source, answer.get(field) if isinstance(answer, dict) else None
            continue
        items = answer.get(key) if isinstance(answer, dict) else None
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and model in (
                item.get("id"),
                item.get("name"),
                item.get("model"),
            ):
                yield source.format(owner=_owner(item)), item.get(field)


#: `owned_by` on `/v1/models` -> the server's name, for servers that say `max_model_len`.
_LISTING_OWNERS = {"vllm": "vllm", "sglang": "sglang"}


def _owner(item: dict[str, Any]) -> str:
    """The server that wrote a model listing's entry, by its `owned_by` (vLLM and SGLang
    both say `max_model_len`); "/v1/models" when it does not say."""
    owner = item.get("owned_by")
    return _LISTING_OWNERS.get(owner, "/v1/models") if isinstance(owner, str) else "/v1/models"
