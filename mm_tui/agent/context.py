"""An honest context budget: how large the window really is, and whether the server
silently cut what we sent.

Asked of the server where it can tell: llama-server's `GET /props` (`n_ctx`), Ollama's
`POST /api/show` (`num_ctx` in `parameters`), then Ollama's `GET /api/ps` (the context a loaded
model runs with), else Ollama's default. Plain urllib: tiny requests, made once, from the
worker thread.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.messages import ChatRequest
from mm_tui.support.url_text import shown_url

log = logging.getLogger(__name__)

DEFAULT_CONTEXT_WINDOW = 8192
#: Ollama runs a model with 4096 tokens of context unless num_ctx or OLLAMA_CONTEXT_LENGTH
#: says otherwise (its docs: "< 24 GiB VRAM: 4k context"), whatever the model supports.
OLLAMA_DEFAULT_CONTEXT = 4096
CHARS_PER_TOKEN = 4  # a rough estimate, only used to notice a server cutting the prompt
#: The server counted fewer than this fraction of the tokens we estimate we sent: it cut.
TRUNCATION_RATIO = 0.5
TRUNCATION_MIN_TOKENS = 1000


@dataclass(frozen=True)
class ContextWindow:
    tokens: int
    source: str  # "config", "llama-server /props", "ollama num_ctx", ... for the notice
    note: str = ""
    #: Ollama had not loaded the model yet, so `tokens` is its smallest default, unconfirmed:
    #: the context it runs the model with (OLLAMA_CONTEXT_LENGTH, or 4k/32k/256k by the
    #: machine's VRAM) is only said by `/api/ps` once a request loaded it.
    pending: bool = False
    #: The context the model was trained with (Ollama's `model_info`), 0 when not said.
    trained: int = 0


def root_url(base_url: str) -> str:
    """`http://host:11434/v1` → `http://host:11434`: where the native endpoints live."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


def fetch_json(url: str, body: dict[str, Any] | None, timeout: float) -> Any:
    import urllib.request  # only on the first turn: keeps start-up light

    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method="POST" if data else "GET")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 - our URL
        return json.loads(response.read().decode("utf-8", "replace"))


def discover_context_window(base_url: str, model: str, timeout: float = 2.0) -> ContextWindow:
    """Ask the server how large its context is; fall back to 8192 when it cannot tell."""
    root = root_url(base_url)
    try:
        props = fetch_json(f"{root}/props", None, timeout)
        n_ctx = props.get("default_generation_settings", {}).get("n_ctx") or props.get("n_ctx")
        if isinstance(n_ctx, int) and n_ctx > 0:
            return ContextWindow(n_ctx, "llama-server /props")
    except (OSError, ValueError, AttributeError):
        log.debug("no llama-server /props at %s", shown_url(root), exc_info=True)
    try:
        show = fetch_json(f"{root}/api/show", {"model": model}, timeout)
    except (OSError, ValueError):
        log.debug(
            "no Ollama /api/show at %s: assuming %d",
            shown_url(root),
            DEFAULT_CONTEXT_WINDOW,
            exc_info=True,
        )
        return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
    if not _is_ollama_show(show):  # LM Studio answers any unknown path 200 {"error": ...}
        return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
    match = re.search(r"(?m)^\s*num_ctx\s+(\d+)", str(show.get("parameters") or ""))
    if match:
        return ContextWindow(int(match.group(1)), "ollama num_ctx")
    info = show.get("model_info") or {}
    trained = next(
        (v for k, v in info.items() if k.endswith(".context_length") and isinstance(v, int)), 0
    )
    loaded = ollama_loaded_window(base_url, model, trained, timeout)
    # Not loaded yet: never warn from a default that could not be confirmed (its default
    # depends on the machine); the first request loads the model and `/api/ps` is read again.
    return loaded or ContextWindow(
        OLLAMA_DEFAULT_CONTEXT, "ollama default", pending=True, trained=trained
    )


#: Said when Ollama confirms it runs the model with a small context the model could exceed.
OLLAMA_SMALL_CONTEXT = (
    "Ollama runs {model} with {tokens} tokens of context{supports} — raise it with "
    "OLLAMA_CONTEXT_LENGTH or num_ctx, then set contextWindow"
)


OLLAMA_SMALLER = (
    "Ollama runs {model} with {tokens} tokens of context, less than the {window} of "
    "contextWindow: it cuts the start of longer conversations — raise it with "
    "OLLAMA_CONTEXT_LENGTH or num_ctx, or lower contextWindow"
)


def ollama_loaded_window(
    base_url: str, model: str, trained: int, timeout: float = 2.0
) -> ContextWindow | None:
    """The window Ollama says (`/api/ps`) it runs the loaded `model` with, with a note when
    that is its small default and the model supports more; None while it is not loaded."""
    loaded = _ollama_loaded_context(root_url(base_url), model, timeout)
    if not loaded:
        return None
    note = ""
    if loaded <= OLLAMA_DEFAULT_CONTEXT and trained > loaded:
        supports = f" (the model supports {trained})"
        note = OLLAMA_SMALL_CONTEXT.format(model=model, tokens=loaded, supports=supports)
    return ContextWindow(loaded, "ollama /api/ps", note, trained=trained)


def _is_ollama_show(show: Any) -> bool:
    """An answer of Ollama's `/api/show` (not another server's error that says 200)."""
    return (
        isinstance(show, dict)
        and "error" not in show
        and ("model_info" in show or "modelfile" in show or "details" in show)
    )


def _ollama_loaded_context(root: str, model: str, timeout: float) -> int | None:
    """The context Ollama runs `model` with (OLLAMA_CONTEXT_LENGTH, its own default for the
    machine), said by `GET /api/ps` once a request loaded the model; None before."""
    try:
        running = fetch_json(f"{root}/api/ps", None, timeout)
    except (OSError, ValueError):
        log.debug("no Ollama /api/ps at %s", shown_url(root), exc_info=True)
        return None
    models = running.get("models") if isinstance(running, dict) else None
    for item in models if isinstance(models, list) else []:
        if isinstance(item, dict) and model in (item.get("name"), item.get("model")):
            size = item.get("context_length")
            if isinstance(size, int) and not isinstance(size, bool) and size > 0:
                return size
    return None


def estimate_tokens(request: ChatRequest) -> int:
    """A rough count of the tokens a request carries (messages and tool schemas)."""
    size = len(json.dumps(request.get("messages", []), ensure_ascii=False))
    size += len(json.dumps(request.get("tools", []), ensure_ascii=False))
    return size // CHARS_PER_TOKEN


def truncation_warning(sent_estimate: int, prompt_tokens: int, window: int) -> str | None:
    """A warning when the server counted far fewer prompt tokens than we sent."""
    if sent_estimate < TRUNCATION_MIN_TOKENS or prompt_tokens <= 0:
        return None
    if prompt_tokens >= sent_estimate * TRUNCATION_RATIO:
        return None
    return (
        f"the server counted {prompt_tokens} prompt tokens for about {sent_estimate} sent — it is "
        f"probably cutting the conversation to its context (mm-tui assumes {window}); raise the "
        "server's context (Ollama: num_ctx or OLLAMA_CONTEXT_LENGTH) and set contextWindow"
    )


OVERSIZED = (
    "the request went out larger than the context window: about {sent} tokens for a window "
    "of {window} — the server drops the start of the conversation; {remedy}"
)
#: What helps, when older turns could be summarised and when the turn alone is too large.
COMPACT_OR_RAISE = "/compact, or raise the server's context and set contextWindow"
RAISE_ONLY = "this turn alone is that large: raise the server's context and set contextWindow"


class ContextBudget:
    """How much of the window the conversation uses, as the top line and auto-compaction see
    it: the server's count after each call, else our estimate."""

    def __init__(self, configured: int | None) -> None:
        self.window = configured or DEFAULT_CONTEXT_WINDOW
        self._known = configured is not None
        self.configured = configured is not None
        self._pending: ContextWindow | None = None
        self._asked = ("", "")
        self.used = 0
        #: The session's first call: nothing of it is cached by this session yet (an earlier
        #: session's prefix may be, on a server that counts only what it evaluated).
        self.first = True
        #: The whole prompt's size as the last call's numbers say it, or None when unknown.
        self.prompt_counted: int | None = None

    def ensure_known(self, base_url: str, model: str) -> str:
        """Ask the server for its window once (first turn); returns a note to say, or ""."""
        if self._known:
            return ""
        self._known = True
        found = discover_context_window(base_url, model)
        self.window = found.tokens
        self._pending = found if found.pending else None
        self._asked = (base_url, model)
        return found.note

    @property
    def pending(self) -> bool:
        """Whether the window is a default not yet confirmed (Ollama had not loaded the model)."""
        return self._pending is not None

    def check_configured(self, base_url: str, model: str) -> str:
        """With `contextWindow` set, on Ollama (whose counts cannot tell a cut from a cached
        prefix): a line when the context it says it runs the model with is smaller."""
        found = ollama_loaded_window(base_url, model, 0)
        if found is None or found.tokens >= self.window:
            return ""
        return OLLAMA_SMALLER.format(model=model, tokens=found.tokens, window=self.window)

    def confirm(self) -> str:
        """After a request loaded the model: the window Ollama says it runs it with (read once
        more); returns the note to say, or ""."""
        pending, self._pending = self._pending, None
        if pending is None:
            return ""
        found = ollama_loaded_window(*self._asked, pending.trained)
        if found is None:  # still not said (an old Ollama): the default stands, unsaid
            return ""
        self.window = found.tokens
        return found.note

    def after_call(
        self,
        request: ChatRequest,
        usage: tuple[int, int] | None,
        text: str,
        whole: int | None = None,
        first_counts_all: bool = True,
        compactable: Callable[[], bool] = lambda: True,
    ) -> str:
        """Record what one call used; returns a warning when the request was larger than the
        window or the server seems to have cut what it was sent, else "".

        `whole` is the whole prompt's size when the server's numbers say it (cached part
        included: `usage_report.whole_prompt`). Without it the first call's `prompt_tokens`
        stands for it (nothing of this session is cached yet), unless `first_counts_all` is
        False: a server that counts only what it evaluated (Ollama) may hold the same fixed
        prompt from an earlier session. A later call's may leave out a cached prefix, so it is
        not read as the size of the prompt: no warning, and the estimate stands when larger.
        `compactable()`: older turns could be summarised (`/compact` would help); asked only
        for a request larger than the window."""
        first, self.first = self.first, False
        if whole is None and first and first_counts_all and usage is not None:
            whole = usage[0]
        self.prompt_counted = whole
        sent = estimate_tokens(request)
        if usage is None:
            self.used = sent + len(text) // CHARS_PER_TOKEN
        else:
            self.used = (whole if whole is not None else max(usage[0], sent)) + usage[1]
        if sent > self.window:
            remedy = COMPACT_OR_RAISE if compactable() else RAISE_ONLY
            return OVERSIZED.format(sent=sent, window=self.window, remedy=remedy)
        if usage is None or whole is None:
            return ""
        if whole is None:
            return ""
        return truncation_warning(sent, whole, self.window) or ""

    def over(self, fraction: float | None) -> bool:
        """Whether `fraction` of the window is used (auto-compaction's trigger)."""
        return bool(fraction) and self.used >= (fraction or 0) * self.window

    def reset(self) -> None:
        self.used = 0
        self.first = True
        self.prompt_counted = None
