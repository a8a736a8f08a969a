"""`--replay` and `--demo` behind the same seam as the live core: a source that plays a session.

`ReplaySource` implements `AgentPort`: it plays the timed events of `mm_tui.replay` to the sink
on its own thread, as a core would send them, and refuses at once what needs a model (messages,
`/compact`, `/model`) or a permission gate (`/new`, `/yolo`, `/permissions`) in today's words.
Esc (`cancel`) stops the replay. At speed 0 there is nothing to play in time: the session is
handed to the window whole (`resumed_history`), which shows it at once, and only the end of the
replay is said.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from mm_tui.agent.checkpoints import UndoResult
from mm_tui.agent.events import EventSink, Notice, SpinnerChanged, TurnEnded
from mm_tui.agent.model_client import ModelFault
from mm_tui.agent.port import AgentPort, PermissionMode, PermissionState, TopLineView
from mm_tui.agent.session_index import SessionInfo
from mm_tui.replay import END_OF_REPLAY, Replay, TimedEvent

REPLAY_STOPPED = "replay stopped"
NO_MODEL_IN_REPLAY = "a replay has no model to answer"
NO_AGENT_IN_REPLAY = "{command} is not available in a replay"
#: Commands that work in a replay: they need neither a model nor a gate.
WORKS_IN_REPLAY = frozenset({"/help", "/export", "/quit"})


class ReplaySource:
    """A saved session played back as the core's events, with no model behind it."""

    def __init__(
        self,
        events: Iterable[TimedEvent],
        meta: dict[str, str],
        sink: EventSink,
        *,
        cwd: Path,
        context_window: int = 0,
    ) -> None:
        """`events`: a `Replay` (made lazily as played), or any timed events.
        `cwd`, `context_window`: shown when the session file does not say."""
        self.events = events
        self.whole = events.document if isinstance(events, Replay) and events.at_once else None
        self.meta = meta
        self.sink = sink
        self.cwd = Path(meta.get("cwd") or cwd)
        self.context_window = context_window
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._play, name="replay", daemon=True)

    def start(self) -> ReplaySource:
        """Start playing; returns itself (for factories)."""
        self._thread.start()
        return self

    def _play(self) -> None:
        if self.whole is not None:  # the window shows it at once: only its end is said
            self.sink(Notice("info", END_OF_REPLAY))
            return
        for delay, event in self.events:
            if self._stop.wait(delay) if delay > 0 else self._stop.is_set():
                self.sink(Notice("info", REPLAY_STOPPED))
                self.sink(SpinnerChanged(""))
                self.sink(TurnEnded("interrupted"))
                return
            self.sink(event)

    def refusal(self, intent: str) -> Notice | None:
        """What a replay says instead of `intent` (see `RefusingPort`)."""
        if intent == "message":
            return Notice("info", NO_MODEL_IN_REPLAY)
        if intent in WORKS_IN_REPLAY:
            return None
        return Notice("warning", NO_AGENT_IN_REPLAY.format(command=intent))

    # -- AgentPort ------------------------------------------------------------------------

    @property
    def startup_notices(self) -> list[Notice]:
        return []

    def run_turn(self, text: str) -> TurnEnded:
        """A replay answers nothing: the turn ends at once, saying so."""
        return TurnEnded("error", NO_MODEL_IN_REPLAY)

    def run_command(self, command: str) -> TurnEnded:
        """A replay runs no command."""
        return TurnEnded("error", NO_AGENT_IN_REPLAY.format(command="!"))

    def undo(self, *, force: bool = False) -> UndoResult:
        """A replay changed no file."""
        return UndoResult(None)

    def cancel(self) -> None:
        """Esc: stop the replay where it is."""
        self._stop.set()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)

    def compact(self) -> None:
        self.sink(Notice("warning", NO_AGENT_IN_REPLAY.format(command="/compact")))

    def new_session(self) -> None:
        """Nothing to start afresh: the replay is a record."""

    def list_models(self) -> list[str]:
        raise ModelFault(NO_AGENT_IN_REPLAY.format(command="/model"))

    def set_model(self, name: str) -> None:
        raise ModelFault(NO_AGENT_IN_REPLAY.format(command="/model"))

    def set_permissions(self, mode: PermissionMode) -> None:
        """A replay runs no tool: there is no gate to set."""

    def set_yolo(self, on: bool) -> None:
        """A replay runs no tool: there is no gate to set."""

    def revoke_grants(self, names: Iterable[str] | None = None) -> list[str]:
        return []

    def permission_state(self) -> PermissionState:
        return PermissionState("ask", False, frozenset())

    def full_output(self, call_id: str) -> str | None:
        """A replay keeps only what the model got: the row's output is the whole of it."""
        return None

    def resumed_history(self) -> dict[str, Any] | None:
        """At speed 0, the whole session (the window shows it at once); else None."""
        return self.whole

    def session_id(self) -> str:
        return ""

    def list_sessions(self) -> list[SessionInfo]:
        """A replay goes on in no session (`/resume` is refused before asking)."""
        return []

    def open_session(self, session: str) -> list[Notice]:
        return [Notice("warning", NO_AGENT_IN_REPLAY.format(command="/resume"))]

    def fork_session(self, session: str) -> list[Notice]:
        return self.open_session(session)

    def top_line(self) -> TopLineView:
        return TopLineView(
            model=self.meta.get("model", ""),
            server=self.meta.get("base_url", ""),
            cwd=self.cwd,
            used=0,
            window=self.context_window,
            mode="replay",
        )


def replay_factory(
    events: Iterable[TimedEvent], meta: dict[str, str], *, cwd: Path, context_window: int = 0
) -> Callable[[EventSink], AgentPort]:
    """The window's port factory for a replay: builds the source and starts it playing."""

    def factory(sink: EventSink) -> AgentPort:
        return ReplaySource(events, meta, sink, cwd=cwd, context_window=context_window).start()

    return factory
