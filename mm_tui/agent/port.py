"""The seam between a front (the window, headless, ACP) and whatever answers its turns.

Both the live `Agent` and a replay source implement `AgentPort`; a front holds one and never
reaches past it (no `getattr`, no attribute writes). Settings that the worker reads while a turn
runs (permissions, yolo, grants) change only through these methods, under the gate's lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from mm_tui.agent.events import Notice, TurnEnded

if TYPE_CHECKING:  # the window imports the seam at start-up, the sessions' code with the core
    from mm_tui.agent.checkpoints import UndoResult
    from mm_tui.agent.session_index import SessionInfo

PermissionMode = Literal["ask", "allow"]


@dataclass(frozen=True)
class ConfigRule:
    """One rule of the config, as `/permissions` lists it: `deny bash(rm *)` and its file."""

    effect: str  # "deny", "ask" or "allow"
    text: str
    origin: str


@dataclass(frozen=True)
class PermissionState:
    """A snapshot of the gate, for `/permissions` and the top line."""

    mode: PermissionMode
    yolo: bool
    grants: frozenset[str]
    rules: tuple[ConfigRule, ...] = ()


@dataclass(frozen=True)
class TopLineView:
    """What the window's top line shows: model, server, directory, context, mode."""

    model: str
    server: str
    cwd: Path
    used: int
    window: int
    mode: str  # "", "yolo" or "replay"
    #: The fixed prompt (system prompt, tools), counted on the first turn; 0 until then.
    prompt: int = 0
    #: The share of the last prompt the server reused from its cache, in percent, if said.
    cache: int | None = None


class AgentPort(Protocol):
    """What a front may ask of the core. Blocking methods run in a worker thread."""

    @property
    def startup_notices(self) -> list[Notice]: ...

    def run_turn(self, text: str) -> TurnEnded:
        """Run one user turn to its end (blocking); never raises for a fault."""
        ...

    def run_command(self, command: str) -> TurnEnded:
        """`!command`: run the person's shell command through bash and the gate (blocking);
        its output goes along with the next message. Never raises for a fault."""
        ...

    def undo(self, *, force: bool = False) -> UndoResult:
        """`/undo`: put back the files of the last turn that changed some (blocking); without
        `force`, nothing when one of them changed since. Called while no turn runs."""
        ...

    def cancel(self) -> None:
        """Interrupt the running turn or compaction; callable from any thread."""
        ...

    def close(self) -> None:
        """Stop everything still running (commands, language servers)."""
        ...

    def compact(self) -> None:
        """Summarise the conversation (blocking); outcomes are said as notices."""
        ...

    def new_session(self) -> None:
        """A fresh history and a reset loop detector."""
        ...

    def list_models(self) -> list[str]:
        """The server's models (blocking); raises `ModelFault` with one line."""
        ...

    def set_model(self, name: str) -> None: ...

    def set_permissions(self, mode: PermissionMode) -> None: ...

    def set_yolo(self, on: bool) -> None: ...

    def revoke_grants(self, names: Iterable[str] | None = None) -> list[str]:
        """Drop these session grants (all when None); returns those actually revoked, sorted."""
        ...

    def permission_state(self) -> PermissionState: ...

    def top_line(self) -> TopLineView: ...

    def full_output(self, call_id: str) -> str | None:
        """A call's whole output as it ran (the model got it cut at maxOutput), or None."""
        ...

    def resumed_history(self) -> dict[str, Any] | None:
        """The conversation this port opened with (`Session.to_json`'s shape: every message of
        its history, those a compaction summarised included), for the front to show at once;
        None when there is none (a new session, a replay played at its pace)."""
        ...

    def session_id(self) -> str:
        """The id of the session being talked in ("" when there is none, a replay)."""
        ...

    def list_sessions(self) -> list[SessionInfo]:
        """This directory's sessions, most recent first (blocking: reads the index)."""
        ...

    def open_session(self, session: str) -> list[Notice]:
        """Go on in another session (a copy when another process writes it); the lines to
        say. When it cannot be opened, nothing changes and the line says why."""
        ...

    def fork_session(self, session: str) -> list[Notice]:
        """Go on in a copy of a session, the original left as it is."""
        ...
