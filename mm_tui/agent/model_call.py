"""One model call (SPEC §3): the request, the stream turned into events, retries of 429/5xx,
the switch to text-mode tool calls when a server refuses native ones, and the assistant message
written to the conversation.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from typing import Literal

from mm_tui.agent.calls import CUT_REASON
from mm_tui.agent.calls.native_repair import mend_native_call
from mm_tui.agent.calls.quoting import empty_answer, is_lead_in
from mm_tui.agent.chunk_feed import ChunkFeed
from mm_tui.agent.compaction import plan_compaction
from mm_tui.agent.config import Config
from mm_tui.agent.constrained_retry import ConstrainedRetry
from mm_tui.agent.context import ContextBudget
from mm_tui.agent.conversation import Conversation
from mm_tui.agent.events import (
    WAITING_FOR_MODEL,
    AssistantMessageDone,
    Notice,
    TurnEnded,
    Usage,
)
from mm_tui.agent.messages import ChatRequest, Message, only_keys
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.model_family import defaults_for
from mm_tui.agent.prompt_fit import PromptFit, count_tokens
from mm_tui.agent.repair import BADGE_NAME, parse_arguments
from mm_tui.agent.stream import AssembledCall, StreamAssembler, made_up_id
from mm_tui.agent.text_calls import (
    alternating,
    describe_tools_for_prompt,
    extract_text_calls,
    to_text_protocol,
    tools_ignored,
)
from mm_tui.agent.toolless_reply import ToolsIgnoredWatch
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.agent.turn_signals import TurnSignals
from mm_tui.agent.turn_tally import TurnTally
from mm_tui.agent.usage_report import whole_prompt

log = logging.getLogger(__name__)

CUT_STREAM = "the model's answer was cut off: the stream ended without a finish reason"
TOOLS_UNSUPPORTED = re.compile(r"does not support tools|tools? (?:is|are) not supported", re.I)
TOOLS_DROPPED_NATIVE = (
    "the server counted {} prompt tokens, about what the conversation takes without the tools: "
    "its chat template seems to drop them, so the model never sees a tool — set toolCalls: "
    "text (or auto) to describe the tools in the prompt"
)
FAMILY_TEXT_MODE = (
    "{model} is a {family} model whose chat template has no tools: this session describes "
    "them in the prompt (toolCalls: native in the config keeps them native)"
)
RETRY_DELAYS = (1.0, 2.0, 4.0)  # 429 and 5xx: three retries at most (SPEC §3)

#: Message keys the model is sent; anything else (reasoning kept for replay) stays local.
_SENT_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}

ToolMode = Literal["native", "text"]


class ModelCall:
    """Streams completions for one conversation; holds the tool-call mode."""

    def __init__(
        self,
        config: Config,
        client: ModelClient,
        registry: ToolRegistry,
        conversation: Conversation,
        signals: TurnSignals,
        budget: ContextBudget,
        retry_delays: Sequence[float] = RETRY_DELAYS,
    ) -> None:
        self.config = config
        self.client = client
        self.registry = registry
        self.conversation = conversation
        self.signals = signals
        self.budget = budget
        self.retry_delays = tuple(retry_delays)
        #: "native" (the API's tools) or "text" (described in the prompt): see
        #: docs/decisions/0005-text-protocol.md.
        self.tool_mode: ToolMode = "text" if config.tool_calls == "text" else "native"
        self._said_tools_dropped = False
        self.toolless = ToolsIgnoredWatch()
        #: The last rung: a call no repair reads is asked again under a grammar.
        self.constrained = ConstrainedRetry(config.base_url)
        #: The fixed prompt counted and shrunk to the window served (first turn).
        self.fit = PromptFit()
        #: What the server said it reused of the last prompt (prompt_reuse), if it did.
        self.reuse: tuple[int, int] | None = None

    def request(self, model: str) -> ChatRequest:
        """The chat request for the conversation as it stands."""
        messages = [only_keys(m, _SENT_KEYS) for m in self.conversation.messages]
        tools = self.fit.tools(self.registry.schemas())
        if self.tool_mode == "text":
            messages = to_text_protocol(messages, describe_tools_for_prompt(tools))
        request: ChatRequest = {"model": model, "messages": alternating(messages)}
        if tools and self.tool_mode == "native":
            request["tools"] = tools
        request = {**request, **defaults_for(model, self.config).sampling}  # family's or config's
        request["stream_options"] = {"include_usage": True}
        return request

    def fit_prompt(self, model: str, window: int) -> list[str]:
        """Once, on the first turn: the family's tool mode (model_family), then the fixed
        prompt counted with the server's tokenizer and shrunk to fit the window (prompt_fit).
        Returns the lines to say."""
        if self.fit.tokens:
            return []
        said: list[str] = []
        chosen = defaults_for(model, self.config)
        if chosen.text_mode and chosen.family is not None and self.tool_mode == "native":
            self.tool_mode = "text"
            said.append(FAMILY_TEXT_MODE.format(model=model, family=chosen.family.label))
        kind = self.constrained.server()
        shrunk = self.fit.fit(
            self,
            model,
            window,
            lambda text: count_tokens(self.config.base_url, kind, model, text),
            may_switch_mode=self.config.tool_calls == "auto",
        )
        return [*said, shrunk] if shrunk else said

    def run(self, model: str, tally: TurnTally) -> StreamAssembler | TurnEnded:
        """Stream one completion, retrying 429/5xx; record the assistant message.

        Raises ModelFault (the turn ends with its line) or Interrupted.
        """
        for attempt in range(len(self.retry_delays) + 1):
            try:
                return self._stream_once(model, tally)
            except ModelFault as fault:
                if self._switch_to_text_mode(model, fault):
                    return self._stream_once(model, tally)
                if not fault.retryable or attempt == len(self.retry_delays):
                    if fault.retryable:
                        raise ModelFault(
                            f"{fault.message} — gave up after {attempt} retries"
                        ) from None
                    raise
                delay = self.retry_delays[attempt]
                log.debug(
                    "retryable fault (%s); retry %d in %gs", fault.message, attempt + 1, delay
                )
                self.signals.sink(Notice("warning", f"{fault.message} — retrying in {delay:g}s"))
                if self.signals.cancel.wait(delay):
                    raise Interrupted() from None
        raise AssertionError("unreachable")

    def _stream_once(self, model: str, tally: TurnTally) -> StreamAssembler | TurnEnded:
        signals = self.signals
        signals.set_spinner(WAITING_FOR_MODEL)
        assembler = StreamAssembler()
        request = self.request(model)
        started = time.monotonic()
        log.debug(
            "model call: %s, %d messages, %s tools",
            model,
            len(request["messages"]),
            self.tool_mode,
        )
        feed = ChunkFeed(assembler, signals, started)  # assembled, said, watched per chunk

        try:
            self.client.stream(request, signals.cancel, feed)
        except Interrupted:
            log.debug("model call interrupted after %.3fs", time.monotonic() - started)
            self._record_partial(assembler)
            raise
        except ModelFault as fault:
            log.debug("model call failed after %.3fs: %s", time.monotonic() - started, fault)
            raise
        log.debug(
            "model call: ended after %.3fs (finish %s, usage %s, %d chars, %d tool calls)",
            time.monotonic() - started,
            assembler.finish_reason,
            assembler.usage,
            len(assembler.text),
            len(assembler.calls),
        )
        self._account(request, assembler, tally)
        self._notice_dropped_tools(request, assembler)
        if feed.runaway:
            self._record_partial(assembler)
            return self.conversation.end_with_error(feed.runaway_where, feed.runaway)
        if assembler.was_cut:
            self._record_partial(assembler)
            return self.conversation.end_with_error("model", CUT_STREAM)
        content = assembler.text
        self._mend_native_calls(assembler)
        if not assembler.calls and (assembler.text or assembler.reasoning):
            content = self._calls_from_text(assembler)
        self._constrained_retry(request, assembler, tally)
        if not assembler.calls and self.tool_mode == "native" and request.get("tools"):
            line = self.toolless.check(
                content, self.conversation.messages, lambda: self.constrained.server().name
            )
            if line:  # told, never switched: the person knows their server
                self.signals.sink(Notice("warning", line))
        self._record(assembler, content)
        return assembler

    def _account(self, request: ChatRequest, assembler: StreamAssembler, tally: TurnTally) -> None:
        """Tokens: the tally, the usage event and the context budget."""
        self.reuse = assembler.reuse or self.reuse
        if assembler.usage is not None:
            tally.add_usage(*assembler.usage)
            self.signals.sink(Usage(*assembler.usage))
        confirmed = self.budget.confirm()  # the window once the first request loaded it
        if confirmed:
            self.signals.sink(Notice("warning", confirmed))
        reported = assembler.reported
        whole = whole_prompt(reported, assembler.timings_prompt) if reported else None
        # Ollama counts only what it evaluated, and its cache may hold an earlier session's
        # prefix: even the session's first count is not the whole prompt there. Whether it
        # cuts is read from the context it says it runs the model with instead.
        on_ollama = self.budget.first and self.constrained.server().name == "ollama"
        first_counts_all = not (on_ollama and whole is None)
        if on_ollama and self.budget.configured:
            smaller = self.budget.check_configured(self.config.base_url, str(request["model"]))
            if smaller:
                self.signals.sink(Notice("warning", smaller))
        warning = self.budget.after_call(
            request, assembler.usage, assembler.text, whole, first_counts_all,
            lambda: plan_compaction(self.conversation.messages) is not None,
        )  # fmt: skip
        if warning and self._tools_dropped(request, assembler):
            warning = ""  # a short count because the template dropped the tools, not a cut
        if warning and not tally.warned_truncation:
            tally.warned_truncation = True
            self.signals.sink(Notice("warning", warning))

    def _constrained_retry(
        self, request: ChatRequest, assembler: StreamAssembler, tally: TurnTally
    ) -> None:
        """A call no repair could read: asked again, once, with its schema as a grammar."""
        outcome = self.constrained.mend(
            self.client, self.signals, request, assembler.calls, self.registry
        )
        if outcome.usage is not None:
            tally.add_usage(*outcome.usage)
        if outcome.notice:
            self.signals.sink(Notice("info", outcome.notice))

    def _calls_from_text(self, assembler: StreamAssembler) -> str:
        """Tool calls written in the answer's text (weak models, text mode): added to the
        assembler; returns the text left once they are taken out."""

        def is_known(name: str) -> bool:
            return self.registry.resolve(name) is not None

        finished = assembler.finish_reason != "length"
        found = extract_text_calls(assembler.text, is_known, finished=finished)
        if not found.calls and assembler.reasoning and is_lead_in(assembler.text):
            # a call written only in the reasoning runs when the answer does nothing but
            # announce it; the answer is kept as written (the policy: calls/policy.py)
            in_reasoning = extract_text_calls(assembler.reasoning, is_known, reasoning=True)
            found = type(found)(in_reasoning.calls, assembler.text)
        for call in found.calls:
            arguments = call.arguments
            if not isinstance(arguments, str):
                arguments = json.dumps(arguments, ensure_ascii=False)
            assembler.calls.append(
                AssembledCall(
                    made_up_id(),
                    call.name,
                    arguments,
                    badge=call.badge,
                    raw=call.raw,
                    not_run=call.not_run,
                )
            )
        return found.remaining if found.calls else assembler.text

    def _mend_native_calls(self, assembler: StreamAssembler) -> None:
        """Native calls whose name carries leaked tokens or markup, mended."""
        for position, call in enumerate(assembler.calls):
            mended = mend_native_call(
                call.name, call.arguments, lambda name: self.registry.resolve(name) is not None
            )
            if mended is not None:
                assembler.calls[position] = AssembledCall(
                    call.id, mended.name, mended.arguments, call.index, BADGE_NAME, mended.raw
                )
        last = assembler.calls[-1] if assembler.calls else None
        if (
            last is not None
            and assembler.finish_reason == "length"
            and parse_arguments(last.arguments).arguments is None
        ):  # the token limit cut the last call: the complete ones run, this one does not
            last.not_run = CUT_REASON.format(why="finish_reason length")

    def _record(self, assembler: StreamAssembler, content: str) -> None:
        message: Message = {"role": "assistant", "content": content or None}
        if assembler.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in assembler.calls
            ]
        elif empty_answer(assembler.text, assembler.reasoning):
            # nothing for the person: kept out of the history (an empty assistant message
            # sent back breaks some templates); the turn asks once more (agent.py)
            self.signals.sink(AssistantMessageDone(assembler.text, assembler.reasoning))
            return
        if assembler.reasoning:
            message["reasoning_content"] = assembler.reasoning
        self.conversation.append(message)
        self.signals.sink(AssistantMessageDone(assembler.text, assembler.reasoning))

    def _record_partial(self, assembler: StreamAssembler) -> None:
        """Keep what was said before a cut or an interrupt; drop half-written tool calls."""
        if assembler.text or assembler.reasoning:
            message: Message = {"role": "assistant", "content": assembler.text}
            if assembler.reasoning:
                message["reasoning_content"] = assembler.reasoning
            self.conversation.append(message)
            self.signals.sink(AssistantMessageDone(assembler.text, assembler.reasoning))

    def _tools_dropped(self, request: ChatRequest, assembler: StreamAssembler) -> bool:
        # never on a count that may leave out a cached prefix (`ContextBudget.after_call`)
        counted = self.budget.prompt_counted
        return (
            self.tool_mode == "native" and counted is not None and tools_ignored(request, counted)
        )

    def _notice_dropped_tools(self, request: ChatRequest, assembler: StreamAssembler) -> None:
        """A server that took `tools` but counted a prompt without them (llama-server without
        a tool-capable template), said once. In `toolCalls: auto` the session
        switches to the text protocol, which needs nothing of the template; in `native` the
        person is told which setting would."""
        counted = self.budget.prompt_counted
        if assembler.calls or counted is None or not self._tools_dropped(request, assembler):
            return
        if self.config.tool_calls == "native":
            if not self._said_tools_dropped:
                self._said_tools_dropped = True
                self.signals.sink(Notice("warning", TOOLS_DROPPED_NATIVE.format(counted)))
            return
        if self.config.tool_calls != "auto":
            return
        self.tool_mode = "text"
        self.signals.sink(
            Notice(
                "warning",
                f"the server counted {counted} prompt tokens, about what the "
                "conversation takes without the tools: it seems to ignore them — this session "
                "now describes the tools in the prompt and reads calls from the text",
            )
        )

    def _switch_to_text_mode(self, model: str, fault: ModelFault) -> bool:
        """In `toolCalls: auto`, a server that says the model has no tools → text protocol."""
        if self.config.tool_calls != "auto" or self.tool_mode != "native":
            return False
        if fault.status != 400 or not TOOLS_UNSUPPORTED.search(f"{fault.message} {fault.body}"):
            return False
        log.debug("server refused native tools (%s): switching to text mode", fault.message)
        self.tool_mode = "text"
        self.signals.sink(
            Notice(
                "warning",
                f"the server says {model} does not support native tool calls — this "
                "session now describes the tools in the prompt and reads calls from the text",
            )
        )
        return True
