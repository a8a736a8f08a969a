"""Every event the agent core emits, in one module.

The core speaks to its sinks (the window, the headless printer, the tests) only through these
small frozen dataclasses. Read this file to learn the whole protocol between core and window.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

# SPEC §3: spinner states, exact strings.
WAITING_FOR_MODEL = "Waiting for the model"
THINKING = "Thinking"
WRITING = "Writing"
COMPOSING_TOOL_CALL = "Composing a tool call"
WAITING_FOR_ANSWER = "Waiting for your answer (a/s/r)"


#: The call id of a command the person ran with `!cmd` starts with this: a front keeps its
#: output open, since the person asked to see it.
PERSON_CALL_PREFIX = "shell_"


def running_state(tool: str) -> str:
    """The spinner text while a tool runs (SPEC §3)."""
    return f"Running {tool}"


class ToolStatus(StrEnum):
    """How a tool call ended (or that it still runs); the window shows one glyph and word each."""

    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    TIMED_OUT = "timed out"
    REJECTED = "rejected"
    INTERRUPTED = "interrupted"
    LOOP_DETECTED = "loop detected"


#: One glyph per status, shared by the window's rows and the headless lines.
STATUS_GLYPHS: dict[ToolStatus, str] = {
    ToolStatus.RUNNING: "…",
    ToolStatus.DONE: "✓",
    ToolStatus.FAILED: "✗",
    ToolStatus.TIMED_OUT: "⏱",
    ToolStatus.REJECTED: "⊘",
    ToolStatus.INTERRUPTED: "■",
    ToolStatus.LOOP_DETECTED: "↻",
}


class ToolKind(StrEnum):
    """Which counter of the turn summary a tool's calls count in (SPEC §7).

    The value IS the counter's name: in `TurnSummary`, in the session file's `counters` and in
    replays. It is spelled here and nowhere else.
    """

    COMMAND = "commands"  # ⚙ N command(s)
    FILE = "file_ops"  # 📝 N file op(s)
    SKILL = "skills"  # 📖 N skill(s)
    LSP = "lsp_calls"  # 🔎 N lsp call(s)


class PermissionAnswer(StrEnum):
    """The person's answer to a permission question: keys a, s, r."""

    ALLOW_ONCE = "a"
    ALLOW_SESSION = "s"
    REJECT = "r"


@dataclass(frozen=True)
class PermissionReply:
    """An answer with words: a rejection may say why, and the model reads it."""

    answer: PermissionAnswer
    reason: str = ""


@dataclass(frozen=True)
class TurnStarted:
    """A user message was accepted and a turn begins."""

    text: str


@dataclass(frozen=True)
class SpinnerChanged:
    """The status line's state text changed (one of the SPEC §3 strings)."""

    state: str


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's answer text (Markdown), to be appended."""

    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    """A piece of the model's reasoning; shown folded, never sent back to the model."""

    text: str


@dataclass(frozen=True)
class AssistantMessageDone:
    """The model finished one message (text and/or tool calls) of the turn."""

    text: str
    reasoning: str


@dataclass(frozen=True)
class ToolStarted:
    """A tool call is about to be handled (it may still wait for permission)."""

    call_id: str
    name: str
    arguments: dict[str, Any]
    title: str  # e.g. "bash ls -la", "edit_file src/a.py", "lsp definition main.go greet"
    badge: str = ""  # the repair-ladder step that produced the call ("" = native)
    raw: str = ""  # the raw text the call was parsed from, when it was repaired


@dataclass(frozen=True)
class PermissionRequest:
    """The core waits for the person. The sink resolves `future` with a PermissionAnswer.

    `detail` is exactly what will run (a command) and `diff` what will change (an edit), raw:
    a front shows them with `support.terminal_text.visible_parts`, hiding nothing. `location`
    is the absolute path touched, marked when outside the project; `grant` what key `s`
    allows (`bash(git status *)`). The future takes a PermissionAnswer or a PermissionReply.
    """

    call_id: str
    name: str
    title: str
    detail: str
    diff: str | None
    future: Future[PermissionAnswer | PermissionReply] = field(compare=False, repr=False)
    grant: str = ""
    location: str = ""


@dataclass(frozen=True)
class PermissionResolved:
    """The person (or a session grant, or yolo) answered; the row shows the answer."""

    call_id: str
    answer: PermissionAnswer
    automatic: bool = False


@dataclass(frozen=True)
class ToolRunning:
    """The call now runs: its permission (when one was asked) was given and the tool started.

    A call refused, interrupted at its question, or failing before it runs (unknown tool,
    arguments that are not JSON) never says it; ToolFinished ends every call either way.
    """

    call_id: str
    name: str


@dataclass(frozen=True)
class ToolOutputDelta:
    """Live output of a running tool (bash), for the expanded row."""

    call_id: str
    text: str


@dataclass(frozen=True)
class ToolFinished:
    """A tool call ended; `output` is exactly what the model receives."""

    call_id: str
    name: str
    title: str
    status: ToolStatus
    duration: float
    output: str
    diff: str | None = None


NoticeLevel = Literal["info", "warning", "error", "loop"]


@dataclass(frozen=True)
class Notice:
    """One clear line for the person: a server fault, a warning, a loop verdict, info."""

    level: NoticeLevel
    text: str


@dataclass(frozen=True)
class Usage:
    """Token usage reported by the server for one model call."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class TurnSummary:
    """After every turn (SPEC §7): the four counters, duration and tokens."""

    commands: int
    file_ops: int
    skills: int
    lsp_calls: int
    duration: float
    prompt_tokens: int
    completion_tokens: int

    @classmethod
    def of(
        cls,
        counts: Mapping[ToolKind, int],
        duration: float,
        prompt_tokens: int,
        completion_tokens: int,
    ) -> TurnSummary:
        """The summary of these counts per tool kind (a kind absent counts 0)."""
        by_name = {kind.value: counts.get(kind, 0) for kind in ToolKind}
        return cls(
            **by_name,
            duration=duration,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
        )

    def count(self, kind: ToolKind) -> int:
        """The counter of one tool kind."""
        value: int = getattr(self, kind.value)
        return value

    def line(self) -> str:
        """`⚙ N command(s) · 📝 N file op(s) · 📖 N skill(s) · 🔎 N lsp call(s)` + time, tokens."""
        counters = (
            f"⚙ {self.commands} command(s) · 📝 {self.file_ops} file op(s) · "
            f"📖 {self.skills} skill(s) · 🔎 {self.lsp_calls} lsp call(s)"
        )
        tokens = self.prompt_tokens + self.completion_tokens
        return f"{counters} · {self.duration:.1f}s · {tokens} tokens"


@dataclass(frozen=True)
class TurnEnded:
    """The turn is over. `error` is the one-line reason when it ended in an error."""

    reason: Literal["answered", "max_turns", "loop", "error", "interrupted"]
    error: str | None = None


Event = (
    TurnStarted
    | SpinnerChanged
    | TextDelta
    | ReasoningDelta
    | AssistantMessageDone
    | ToolStarted
    | PermissionRequest
    | PermissionResolved
    | ToolRunning
    | ToolOutputDelta
    | ToolFinished
    | Notice
    | Usage
    | TurnSummary
    | TurnEnded
)

EventSink = Callable[[Event], None]
