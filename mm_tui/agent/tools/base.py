"""The contract between the turn loop and every tool.

A tool never raises for an ordinary failure (SPEC §1): it returns the failure's text as its
output. The loop asks `needs_permission`, shows `preview` to the person, then calls `run`.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from mm_tui.agent.events import ToolKind, ToolStatus
from mm_tui.agent.rules import Rule, Subject
from mm_tui.support.terminal_text import visible

#: What a call answers when the person interrupted it (SPEC §3): the turn loop, bash and the
#: language-server client all say these same words.
INTERRUPTED = "[interrupted by the user]"

__all__ = [
    "INTERRUPTED",
    "Tool",
    "ToolContext",
    "ToolKind",
    "ToolPreview",
    "ToolResult",
    "truncate_output",
]


@dataclass
class ToolContext:
    """What a running tool may use: where it works, how much it may say, when to stop."""

    cwd: Path
    max_output: int = 10_000
    cancel: threading.Event = field(default_factory=threading.Event)
    emit_output: Callable[[str], None] = lambda text: None  # live output for the row
    #: What one call computed once and reuses (a file tool's plan: the file is read once).
    memo: dict[str, Any] = field(default_factory=dict)
    #: Every piece of output, none dropped: the person's full copy (Ctrl+O); the live row
    #: and the model's copy may both be cut.
    keep_output: Callable[[str], None] = lambda text: None
    #: Called with a file's path just before a tool writes it, so `/undo` can put it back
    #: (write_file, edit_file and the lsp rename call it; agent/checkpoints.py).
    before_change: Callable[[Path], None] = lambda path: None


@dataclass(frozen=True)
class ToolPreview:
    """What the person is shown before allowing a call: what will run, which file changes."""

    title: str
    detail: str
    diff: str | None = None
    #: What the preview was computed from (a file's stamp); a different basis when the
    #: answer comes means the file changed under the question: ask again.
    basis: str | None = None
    #: The absolute path a file tool touches, escaped, marked when outside the project.
    location: str = ""


@dataclass(frozen=True)
class ToolResult:
    """`output` is exactly what the model receives; the rest is for the window's row."""

    output: str
    status: ToolStatus = ToolStatus.DONE
    diff: str | None = None


class Tool(ABC):
    """One built-in tool. Subclasses set the class attributes and implement `run`."""

    name: ClassVar[str]
    kind: ClassVar[ToolKind]
    #: The text returned when the person rejects the call; None = the tool never asks.
    rejection_text: ClassVar[str | None] = None

    #: The description the model reads: short, with the method and one example.
    fixed_description: ClassVar[str] = ""
    #: The JSON schema of the arguments.
    parameters: ClassVar[dict[str, Any]]

    @property
    def description(self) -> str:
        """What the model reads; a tool whose description depends on the session (read_skill's
        catalogue, lsp's servers) overrides this property, the others set `fixed_description`."""
        return self.fixed_description

    def schema(self) -> dict[str, Any]:
        """The tool as declared in `tools=` of a chat completion request."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """Whether this call must be allowed by the person under `permissions: ask`. With
        `ctx`, a tool may look at the disk (an edit that changes nothing need not ask)."""
        return self.rejection_text is not None

    def subject(self, args: dict[str, Any], ctx: ToolContext) -> Subject | None:
        """What permission rules look at (a command, a path); None: the call cannot run."""
        return Subject(self.name)

    def grant(self, args: dict[str, Any], ctx: ToolContext) -> Rule:
        """What key `s` allows for the rest of the session; by default every call of the tool."""
        return Rule(self.name, None, self.name)

    def title(self, args: dict[str, Any]) -> str:
        """The row's short title, e.g. `bash ls -la` or `edit_file src/a.py`."""
        first = next((v for v in args.values() if isinstance(v, str)), "")
        return f"{self.name} {visible(first, keep_newlines=False)}".rstrip()

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        """What the permission question shows; edits override this to include their diff."""
        title = self.title(args)
        return ToolPreview(title=title, detail=title)

    @abstractmethod
    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Do the work. Must not raise for an ordinary failure; must honour `ctx.cancel`."""


def truncate_output(text: str, limit: int) -> str:
    """Cut `text` to `limit` characters and say how much was left out (SPEC §1: nothing silent)."""
    if len(text) <= limit:
        return text
    left_out = len(text) - limit
    return f"{text[:limit]}\n[output truncated: {left_out} more characters not shown]"
