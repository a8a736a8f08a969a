"""A reply that reads as if the model had no tools, while tools were sent.

A server whose chat template drops `tools` (llama-server without `--jinja`, an Ollama model
without tool support, a vLLM started without `--enable-auto-tool-choice`) leaves the model
answering as a chat assistant: "I don't have the ability to access files", "I can't run
commands", or a shell block for the person to run and paste back. Nothing fails, so nothing
would be said. Two signs, each enough, are read from the reply's text:

- a capability refusal: the model says in the first person that it cannot reach files, the
  file system, a shell, the terminal or commands ("I don't have access to your file system",
  "I'm unable to execute commands", "as a language model I can't read files");
- a hand-off: a shell block (fenced as bash/sh/shell/console, or lines starting with `$ `) and
  a request to run it and send back what it printed ("run this and paste the output").

Only a reply with no tool call is read, only in the native mode, and only while the
conversation holds no tool call at all: once the model has called a tool, the server passes
them, and a later refusal or a block explaining a command it ran is the model's own matter.
The person is told once per session and nothing is switched: the line says what setting
helps. English phrasings only; the fixture in `tests/agent/fixtures/toolless_replies.yaml`
holds the replies collected from public trackers (with their sources) and the answers that
must not be taken for one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from mm_tui.agent.messages import Message

#: Said once: what the reply showed, then the setting that helps on this server.
TOOLS_IGNORED = (
    'the model answered as if it had no tools ("{quote}") — the server or its chat template '
    "seems to ignore them: {fix}, or set toolCalls: text to describe them in the prompt"
)
FIXES = {
    "llama-server": "start llama-server with --jinja (and a chat template with tools)",
    "ollama": "use a model whose `ollama show` lists tools among its capabilities",
    "vllm": "start vLLM with --enable-auto-tool-choice and a --tool-call-parser",
}
GENERIC_FIX = "enable tool calling on the server (llama-server: --jinja)"
QUOTE_CHARS = 70

_NEGATION = (
    r"(?:do(?:n['’]t| not)|can(?:['’]t|not| not)|am (?:not able|unable)|['’]m (?:not able|unable)"
    r"|(?:have|has) no|lack|(?:am|['’]m) not (?:capable|allowed|permitted))"
)
_REACH = (
    r"(?:access|read|open|see|view|browse|look at|inspect|list|execute|run|interact with|"
    r"modify|write|create|edit|touch|reach|use)"
)
_THING = (
    r"(?:files?|file ?system|filesystem|director(?:y|ies)|folders?|repositor(?:y|ies)|repo|"
    r"codebase|project|computer|machine|system|terminal|shell|commands?|scripts?|code|"
    r"disk|local|environment)"
)
#: "I don't have the ability to access files", "I can't run commands", "I cannot directly
#: read files from your file system", "I don't have file system access": a first person, a
#: negation, then within one clause a reaching verb or a capability noun and its object.
_REFUSAL = re.compile(
    rf"\bI(?:['’]m| am| do| have| genuinely| really| currently| unfortunately|)\b[^.!?\n]{{0,12}}?"
    rf"{_NEGATION}\b[^.!?\n]{{0,60}}?"
    rf"(?:\b{_REACH}\b[^.!?\n]{{0,40}}?\b{_THING}\b|\b{_THING}\b[^.!?\n]{{0,20}}?\b(?:access|tools?)\b)",
    re.IGNORECASE,
)
#: "As an AI (language model) / being an LLM / as a text-based assistant, I can't …".
_AS_A_MODEL = re.compile(
    r"\b(?:as an? (?:AI|large language model|language model|LLM|text-based)|being an? (?:AI|LLM|"
    r"language model))\b[^.!?\n]{0,80}?\b(?:can(?:['’]t|not)|unable|don['’]t|do not)\b"
    rf"[^.!?\n]{{0,60}}?\b{_THING}\b",
    re.IGNORECASE,
)
_SHELL_FENCE = re.compile(
    r"```[ \t]*(?:bash|sh|shell|console|zsh|terminal|powershell|ps1|cmd|bat)?[ \t]*\n"
    r"(?P<body>.*?)```",
    re.DOTALL | re.IGNORECASE,
)
_PROMPT_LINE = re.compile(r"(?m)^\s*\$ \S")
#: Asking the person to run something and send back what it printed.
_REPORT_BACK = re.compile(
    r"\b(?:paste|share|send|post|show|give|provide|copy)\b[^.!?\n]{0,30}?\b(?:output|result|"
    r"results|error|what it (?:says|prints|shows|returns))\b"
    r"|\blet me know what\b[^.!?\n]{0,40}?\b(?:says|shows|prints|returns|outputs|get)\b"
    r"|\b(?:run|execute|type|enter)\b[^.!?\n]{0,40}?\b(?:in|on|from) (?:your|a|the) "
    r"(?:terminal|shell|command line|console|machine|computer)\b",
    re.IGNORECASE,
)


def toolless_sign(text: str) -> str | None:
    """The words of `text` that read as a model without tools, or None."""
    for pattern in (_REFUSAL, _AS_A_MODEL):
        found = pattern.search(text)
        if found:
            return _quoted(found.group(0))
    if _shell_block(text) and (handoff := _REPORT_BACK.search(_outside_fences(text))):
        return _quoted(handoff.group(0))
    return None


def _shell_block(text: str) -> bool:
    """A fenced block of shell (by its language, or by `$ ` prompts in an unnamed fence)."""
    for fence in _SHELL_FENCE.finditer(text):
        head = fence.group(0).split("\n", 1)[0].strip("`").strip()
        if head or _PROMPT_LINE.search(fence.group("body")):
            return True
    return bool(_PROMPT_LINE.search(_outside_fences(text)))


def _outside_fences(text: str) -> str:
    return re.sub(r"```.*?```", " ", text, flags=re.DOTALL)


def _quoted(words: str) -> str:
    words = " ".join(words.split())
    return words if len(words) <= QUOTE_CHARS else f"{words[: QUOTE_CHARS - 1]}…"


def has_tool_calls(messages: Iterable[Message]) -> bool:
    """Whether the conversation holds a tool call: the server passed tools at least once."""
    return any(m.get("role") == "assistant" and m.get("tool_calls") for m in messages)


def tools_ignored_line(quote: str, server: str) -> str:
    """The one line for the person, with the setting that helps on `server`."""
    return TOOLS_IGNORED.format(quote=quote, fix=FIXES.get(server, GENERIC_FIX))


class ToolsIgnoredWatch:
    """Reads each tool-less reply of the native mode; says the line once per session."""

    def __init__(self) -> None:
        self.said = False

    def check(
        self, text: str, messages: Iterable[Message], server: Callable[[], str]
    ) -> str | None:
        """The line to say for this reply, or None (`server` is asked only when needed)."""
        if self.said or not text or has_tool_calls(messages):
            return None
        quote = toolless_sign(text)
        if quote is None:
            return None
        self.said = True
        return tools_ignored_line(quote, server())
