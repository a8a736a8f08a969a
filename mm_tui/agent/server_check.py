"""What a first run needs to know: is the server up, does it have the model, how large is the
context, can it call tools. Shared by `mm-tui doctor` and the window's empty transcript.

Plain urllib with short timeouts (no `openai` import): the window runs this in the background
at start and must have an answer in a second, whatever the server does.
"""

from __future__ import annotations

import json
import logging
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlparse

from mm_tui.agent.config import Config
from mm_tui.agent.context import discover_context_window, root_url
from mm_tui.support.url_text import shown_url

log = logging.getLogger(__name__)

Level = Literal["ok", "warning", "problem"]
SUGGESTED_MODEL = "qwen2.5-coder:14b"

SERVER_UP = "server {url} answers ({count} model(s))"
SERVER_DOWN = "no model server answers at {url} ({reason})"
NOT_OPENAI = (
    "the server at {url} is not OpenAI-compatible (GET /models: {reason}) — "
    "the base URL usually ends in /v1"
)
KEY_REFUSED = "the server at {url} refused the API key (HTTP 401) — set OPENAI_API_KEY or apiKey"
OLLAMA_EMPTY = "Ollama has no model pulled"
NO_MODELS = "the server lists no model — load one in it first"
MODEL_MISSING = "the server has no model {model} (it has: {names})"
MODEL_OK = "model {model}"
MODEL_FIRST = "model {model} (the first the server lists; choose with --model or /model)"
CONTEXT_LINE = "context window {tokens} tokens ({source})"
TOOLS_NATIVE = "tool calls: native (the server says {model} supports tools)"
TOOLS_TEXT = "tool calls: {model} has no native tool calls — tools are described in the prompt"
TOOLS_CONFIG_TEXT = "tool calls: described in the prompt (toolCalls: text)"
TOOLS_UNKNOWN = "tool calls: checked on the first turn (text mode if the server refuses them)"


@dataclass(frozen=True)
class Finding:
    """One line of the check: what was found, how bad, and a command that fixes it."""

    topic: str  # "server", "model", "context", "tools", "lsp", "config"
    level: Level
    text: str
    fix: str = ""  # a command to run (`ollama pull …`), shown after the line


@dataclass(frozen=True)
class ServerReport:
    """The server's part of the check; `model` is the one a turn would use ("" if none)."""

    findings: list[Finding] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    model: str = ""
    ollama: bool = False

    @property
    def reachable(self) -> bool:
        return not any(f.topic == "server" and f.level == "problem" for f in self.findings)


def start_command(base_url: str) -> str:
    """The usual command that starts a server at this URL (by its well-known port)."""
    parsed = urlparse(base_url)
    port = parsed.port
    if port == 11434 or "ollama" in (parsed.hostname or ""):
        return "ollama serve"
    if port == 1234:
        return "lms server start"
    if port == 8000:
        return "vllm serve MODEL"
    if port == 12434:
        return "docker desktop enable model-runner --tcp 12434"
    port_flag = f" --port {port}" if port else ""
    return f"llama-server -m MODEL.gguf --jinja{port_flag}"


def _get_json(url: str, api_key: str, timeout: float) -> Any:
    request = urllib.request.Request(url)
    if api_key and api_key != "none":
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - our URL
        return json.loads(response.read().decode("utf-8", "replace"))


def _is_ollama(base_url: str, timeout: float) -> bool:
    """Ollama answers `GET /api/version`; other servers do not."""
    try:
        answer = _get_json(f"{root_url(base_url)}/api/version", "", timeout)
    except (OSError, ValueError):
        return False
    return isinstance(answer, dict) and "version" in answer


def check_server(config: Config, *, timeout: float = 2.0) -> ServerReport:
    """Server, model and (when both are there) context and tool support."""
    url = config.base_url.rstrip("/")
    shown = shown_url(url)  # what a person reads: no password
    try:
        answer = _get_json(f"{url}/models", config.api_key, timeout)
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return ServerReport([Finding("server", "problem", KEY_REFUSED.format(url=shown))])
        reason = f"HTTP {exc.code}"
        return ServerReport(
            [Finding("server", "problem", NOT_OPENAI.format(url=shown, reason=reason))]
        )
    except (OSError, TimeoutError) as exc:
        reason = getattr(exc, "reason", None) or exc
        reason = getattr(reason, "strerror", None) or str(reason)
        text = SERVER_DOWN.format(url=shown, reason=reason)
        return ServerReport([Finding("server", "problem", text, start_command(url))])
    except ValueError:
        reason = "the answer is not JSON"
        return ServerReport(
            [Finding("server", "problem", NOT_OPENAI.format(url=shown, reason=reason))]
        )
    data = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(data, list):
        reason = "no `data` list in the answer"
        return ServerReport(
            [Finding("server", "problem", NOT_OPENAI.format(url=shown, reason=reason))]
        )
    models = [str(item.get("id")) for item in data if isinstance(item, dict) and item.get("id")]
    findings = [Finding("server", "ok", SERVER_UP.format(url=shown, count=len(models)))]
    ollama = _is_ollama(url, timeout)
    wanted = config.model or ""
    if not models:
        if ollama:
            fix = f"ollama pull {wanted or SUGGESTED_MODEL}"
            findings.append(Finding("model", "problem", OLLAMA_EMPTY, fix))
        else:
            findings.append(Finding("model", "problem", NO_MODELS))
        return ServerReport(findings, models, "", ollama)
    if wanted and wanted not in models:
        text = MODEL_MISSING.format(model=wanted, names=", ".join(models[:8]))
        fix = f"ollama pull {wanted}" if ollama else ""
        findings.append(Finding("model", "problem", text, fix))
        return ServerReport(findings, models, "", ollama)
    model = wanted or models[0]
    findings.append(
        Finding("model", "ok", (MODEL_OK if wanted else MODEL_FIRST).format(model=model))
    )
    return ServerReport(findings, models, model, ollama)


def check_context(config: Config, model: str) -> Finding:
    """The context window: the config's, else what the server says, else the default."""
    if config.context_window:
        return Finding(
            "context",
            "ok",
            CONTEXT_LINE.format(tokens=config.context_window, source="contextWindow"),
        )
    window = discover_context_window(config.base_url, model)
    source = f"{window.source} until the model is loaded" if window.pending else window.source
    text = CONTEXT_LINE.format(tokens=window.tokens, source=source)
    if window.note:
        return Finding("context", "warning", f"{text} — {window.note}")
    return Finding("context", "ok", text)


def check_tools(config: Config, model: str, *, timeout: float = 2.0) -> Finding:
    """Whether the model calls tools natively: Ollama says so in `capabilities`."""
    if config.tool_calls == "text":
        return Finding("tools", "ok", TOOLS_CONFIG_TEXT)
    try:
        request = urllib.request.Request(
            f"{root_url(config.base_url)}/api/show",
            data=json.dumps({"model": model}).encode(),
            method="POST",
        )
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            show = json.loads(response.read().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return Finding("tools", "ok", TOOLS_UNKNOWN)
    capabilities = show.get("capabilities") if isinstance(show, dict) else None
    if not isinstance(capabilities, list):
        return Finding("tools", "ok", TOOLS_UNKNOWN)
    if "tools" in capabilities:
        return Finding("tools", "ok", TOOLS_NATIVE.format(model=model))
    return Finding("tools", "warning", TOOLS_TEXT.format(model=model))


@dataclass(frozen=True)
class FirstRunCheck:
    """The window's start check: what it found, and the model a first turn would use ("" when
    none: no server, no model, or the configured one is missing), for the top line to say."""

    findings: list[Finding]
    model: str = ""


def first_run_check(config: Config) -> FirstRunCheck:
    """The window's start check: server, model and context (tool support waits for a turn)."""
    report = check_server(config)
    findings = list(report.findings)
    if report.model:
        findings.append(check_context(config, report.model))
    return FirstRunCheck(findings, report.model)
