"""A fixed prompt that fits the window actually served.

The fixed part of every request — the system prompt (with AGENTS.md), the tools (with the
skills catalogue in read_skill's description) — is counted once, on the first turn, with the
server's own tokenizer where it offers one (llama-server and vLLM: `POST /tokenize`), else
estimated (4 characters a token). When it would take more than `FIXED_SHARE` of the window
served, it is shrunk in steps until it fits: short tool descriptions, then the text protocol
(`toolCalls: auto` only), then fewer tools. One line says what was shrunk.

Measured with the default tools and prompt: about 1.3k tokens by the estimate (OpenCode
~7.7k, Codex ~10k, Gemini CLI ~9.7k); `tests/agent/test_prompt_fit.py` holds it under 2k.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from typing import Literal, Protocol

from mm_tui.agent.context import CHARS_PER_TOKEN, fetch_json, root_url
from mm_tui.agent.messages import ChatRequest, ToolSchema, text_of
from mm_tui.agent.server_kind import ServerKind
from mm_tui.support.url_text import shown_url

log = logging.getLogger(__name__)

#: The fixed part may take this share of the window served; more, and it is shrunk.
FIXED_SHARE = 0.25
#: The tools given up last to first when even short descriptions do not fit: never bash,
#: read_file or edit_file, which every task needs.
DROP_ORDER = ("lsp", "read_skill", "write_file")
SHRUNK = (
    "the fixed prompt took {before} of the {window} tokens served (over {share:.0%}): "
    "{steps} — now {after}"
)
#: Past this share of the window, even shrunk, the fixed part leaves the conversation too
#: little room: said once, as a warning with what to change.
CROWDED_SHARE = 0.5
CROWDED = (
    "the fixed prompt (system prompt and tools) takes {tokens} of the {window} tokens of context"
    "{how}, leaving little room for the conversation — raise the server's context (llama-server "
    "-c, Ollama OLLAMA_CONTEXT_LENGTH or num_ctx) and set contextWindow, or shorten systemPrompt "
    "and AGENTS.md"
)
OVER = " — more than the whole window"
_FIRST_SENTENCE = re.compile(r"^(.+?[.!?])(?:\s|$)", re.DOTALL)


def first_sentence(text: str) -> str:
    """The description's first sentence (its first line when no sentence ends sooner)."""
    head = text.strip().split("\n", 1)[0]
    found = _FIRST_SENTENCE.match(head)
    return found.group(1) if found else head


#: read_skill's catalogue lines (`  <name> — <description>`): the skills' names stay.
_CATALOGUE_LINE = re.compile(r"(?m)^  \S+ — .*$")


def short_schemas(schemas: list[ToolSchema]) -> list[ToolSchema]:
    """The tools with each description, the tool's and its fields', cut to one sentence
    (read_skill keeps its catalogue: without the names the tool is no use)."""
    out: list[ToolSchema] = []
    for schema in schemas:
        function = dict(schema["function"])
        description = function.get("description") or ""
        catalogue = _CATALOGUE_LINE.findall(description)
        function["description"] = "\n".join([first_sentence(description), *catalogue])
        parameters = dict(function.get("parameters") or {})
        properties = {
            key: {**value, "description": first_sentence(value["description"])}
            if isinstance(value, dict) and isinstance(value.get("description"), str)
            else value
            for key, value in (parameters.get("properties") or {}).items()
        }
        if properties:
            parameters["properties"] = properties
            function["parameters"] = parameters
        out.append({**schema, "function": function})
    return out


def fixed_text(request: ChatRequest) -> str:
    """What every request repeats: the system message and the tools, as sent."""
    messages = request.get("messages") or []
    first = messages[0] if messages and messages[0].get("role") == "system" else None
    system = text_of(first.get("content")) if first is not None else ""
    tools = request.get("tools")
    return f"{system or ''}\n{json.dumps(tools, ensure_ascii=False)}" if tools else system or ""


def count_tokens(
    base_url: str, kind: ServerKind, model: str, text: str, timeout: float = 5.0
) -> tuple[int, str]:
    """(tokens, how counted): the server's tokenizer where it has one, else the estimate."""
    root = root_url(base_url)
    try:
        if kind.name == "llama-server":
            answer = fetch_json(f"{root}/tokenize", {"content": text}, timeout)
            tokens = answer.get("tokens") if isinstance(answer, dict) else None
            if isinstance(tokens, list):
                return len(tokens), "llama-server /tokenize"
        elif kind.name == "vllm":
            answer = fetch_json(f"{root}/tokenize", {"model": model, "prompt": text}, timeout)
            count = answer.get("count") if isinstance(answer, dict) else None
            if isinstance(count, int):
                return count, "vllm /tokenize"
    except (OSError, ValueError):
        log.debug("no tokenizer at %s: estimating", shown_url(root), exc_info=True)
    return len(text) // CHARS_PER_TOKEN, "estimate"


class Shapeable(Protocol):
    """What the fit changes on the model call: its tool mode and its request."""

    tool_mode: Literal["native", "text"]

    def request(self, model: str) -> ChatRequest: ...


class PromptFit:
    """The fixed prompt's size, and the steps taken to fit it; read by the top line."""

    def __init__(self, share: float = FIXED_SHARE) -> None:
        self.share = share
        self.tokens = 0  # the fixed part, once counted (0: not yet)
        self.source = ""
        self.short = False
        self.dropped: tuple[str, ...] = ()
        #: The warning when the fixed part, even shrunk, is over or near the window ("": none).
        self.crowded = ""

    def tools(self, schemas: list[ToolSchema]) -> list[ToolSchema]:
        """The tools as the request declares them, after the steps taken."""
        kept = [s for s in schemas if s.get("function", {}).get("name") not in self.dropped]
        return short_schemas(kept) if self.short else kept

    def fit(
        self,
        call: Shapeable,
        model: str,
        window: int,
        count: Callable[[str], tuple[int, str]],
        *,
        may_switch_mode: bool,
    ) -> str:
        """Count the fixed part; shrink it step by step while it takes more than the share
        of `window`. Returns the line that says what was shrunk, or ""."""

        def measure() -> int:
            self.tokens, self.source = count(fixed_text(call.request(model)))
            return self.tokens

        before = measure()
        limit = self.share * window
        if before <= limit:
            return ""
        shrunk = self._shrink(call, model, window, before, measure, may_switch_mode)
        if self.tokens > CROWDED_SHARE * window:  # even shrunk: what to change
            how = OVER if self.tokens >= window else f" ({self.tokens / window:.0%})"
            self.crowded = CROWDED.format(
                tokens=short_count(self.tokens), window=short_count(window), how=how
            )
        return shrunk

    def _shrink(
        self,
        call: Shapeable,
        model: str,
        window: int,
        before: int,
        measure: Callable[[], int],
        may_switch_mode: bool,
    ) -> str:
        """The steps, in order, while the fixed part takes more than the share of `window`."""
        limit = self.share * window
        steps: list[str] = []
        self.short = True
        steps.append("short tool descriptions")
        if measure() > limit and may_switch_mode and call.tool_mode == "native":
            native = self.tokens
            call.tool_mode = "text"
            if measure() < native:
                steps.append("tools described in the prompt")
            else:  # not smaller by this server's count: kept native
                call.tool_mode = "native"
                measure()
        names = [s["function"]["name"] for s in call.request(model).get("tools") or []]
        names = names or _described_names(call.request(model))
        for name in DROP_ORDER:
            if self.tokens <= limit:
                break
            if name in names:
                self.dropped = (*self.dropped, name)
                measure()
        if self.dropped:
            steps.append("dropped " + ", ".join(self.dropped))
        return SHRUNK.format(
            before=short_count(before),
            window=short_count(window),
            share=self.share,
            steps=", ".join(steps),
            after=short_count(self.tokens),
        )


def _described_names(request: ChatRequest) -> list[str]:
    """Tool names as the text protocol lists them (`## name` lines in the system message)."""
    return re.findall(r"(?m)^## (\S+)$", fixed_text(request))


def short_count(tokens: int) -> str:
    """`950`, `1.3k`: as the top line writes counts."""
    return str(tokens) if tokens < 1000 else f"{tokens / 1000:.1f}k"
