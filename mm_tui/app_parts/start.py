"""How the window gets its core: at mount for a replay, after the trust question,
and otherwise in a worker thread that starts the moment the first frame is on screen.

Building the live Agent imports openai and builds its client (~0.8 s of CPU). Python runs one
thread at a time, so that work must neither delay the first frame (it starts on Textual's
`Ready`, sent once the first frame is drawn) nor wait for anything after it (a message typed
at once waits for the core). While it runs, the collector is paused: the import allocates
hundreds of thousands of objects, and every full collection it triggered walked all of the
window's widgets too (~0.1 s of the first answer's wait). What start-up built is then frozen
out of the collector's sight; `Transcript.on_unmount` gives it back when the window closes.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from textual.app import App

from mm_tui.agent.events import Notice
from mm_tui.window import event_bridge as notes

if TYPE_CHECKING:
    from mm_tui.agent.config import Config
    from mm_tui.agent.port import AgentPort
    from mm_tui.surface import ScreenSurface
    from mm_tui.window.ports import PortFactory
    from mm_tui.window.project_trust import ProjectTrust
    from mm_tui.window.turns import TurnController

log = logging.getLogger(__name__)

AGENT_FAILED = "the agent could not start: {error}"


@contextmanager
def collector_paused(freeze: Callable[[], bool]) -> Iterator[None]:
    """No cyclic garbage collection inside (the process's collector: the window's thread too,
    for the second or so the core takes to build); then, when `freeze()` says so (the window
    is still open), everything alive frozen out of the collector's sight (the modules and
    classes just imported live as long as the process: the first collection after would
    walk them all, ~60 ms); the collector back as it was, even on error."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze():
            gc.freeze()
        if enabled:
            gc.enable()


class CoreStart:
    """Builds the port to the core for `app`, with its bridge (the core's sink), its turns and
    its surface; `obeyed(config)` takes the config loaded again once the project is trusted."""

    def __init__(
        self,
        app: App[int],
        agent_factory: PortFactory | None,
        *,
        build_in_worker: bool,
        trust: ProjectTrust | None,
        parts: tuple[notes.EventBridge, TurnController, ScreenSurface],
        obeyed: Callable[[Config], None],
    ) -> None:
        self.app = app
        self.agent_factory = agent_factory
        self.build_in_worker = build_in_worker
        self.project_trust = trust
        self.bridge, self.turns, self.surface = parts
        self.obeyed = obeyed
        #: The thread building the core: None until the first frame is drawn (or without one).
        self.core_thread: threading.Thread | None = None
        #: Keys typed before the window started are still to be read (`read_typeahead_first`).
        self.typeahead_pending = False
        self._trust_deferred = False

    def read_typeahead_first(self, typed: str) -> None:
        """`typed`, keys typed before the window could read them, is read before the terminal
        (`typeahead_driver`); the trust question waits for them: they were typed blind, for
        the prompt (an Enter answered the question, its safe choice remembered)."""
        from mm_tui.typeahead_driver import with_typeahead

        app = self.app
        driver = with_typeahead(app.driver_class, typed)
        if driver is not app.driver_class:
            app.driver_class = driver
            self.typeahead_pending = True

    def typeahead_read(self) -> None:
        """The driver's `TypeaheadRead`: the trust question deferred for it is asked now."""
        self.typeahead_pending = False
        if self._trust_deferred:
            self._trust_deferred = False
            self._ask_trust()

    def start(self) -> None:
        """At mount: a replay's port now (its top line is right from the first frame); the
        trust question first when the project asks for it; else the core waits for `Ready`."""
        factory = self.agent_factory
        if factory is None:
            return
        if not self.build_in_worker:
            if (port := self._make_port(factory)) is not None:
                self.app.call_later(self.surface.show_resumed, port)
                for notice in self.turns.port_ready(port):
                    self.surface.say(notice.level, notice.text)
        elif self.project_trust is not None:
            self._trust_deferred = self.typeahead_pending
            if not self._trust_deferred:
                self._ask_trust()

    def _ask_trust(self) -> None:
        from mm_tui.widgets.trust_screen import TrustScreen

        assert self.project_trust is not None
        question = TrustScreen(self.project_trust.question)
        self.app.push_screen(question, self._trust_answered)  # the core waits for the answer

    def ready(self) -> None:
        """Textual's `Ready`: the first frame is on screen, the core's build starts now."""
        factory = self.agent_factory
        if factory is not None and self.build_in_worker and self.project_trust is None:
            self._build_in_worker(factory)

    def _trust_answered(self, trusted: bool | None) -> None:
        """The project is trusted (the config is loaded again) or not; the core starts."""
        assert self.project_trust is not None
        if (obeyed := self.project_trust.answer(trusted)) is not None:
            config, self.agent_factory = obeyed
            self.obeyed(config)
        if self.agent_factory is not None:
            self._build_in_worker(self.agent_factory)

    def _build_in_worker(self, factory: PortFactory) -> None:
        # A daemon thread, not a Textual worker: a window closed at once (Ctrl+Q while openai
        # is imported) would wait for the build, 1 to 7 s on a loaded machine, because the
        # event loop joins its executor's threads on the way out. Nothing is lost: the core
        # it builds would only be handed to a window that is gone.
        thread = threading.Thread(
            target=self._build_agent, args=(factory,), name="mm-core-build", daemon=True
        )
        self.core_thread = thread
        self._set_starting(True)
        thread.start()

    def _set_starting(self, starting: bool) -> None:
        """The status line says "Starting…" while the core is built (not "Ready")."""
        from mm_tui.widgets.status_line import StatusLine

        for line in self.app.query(StatusLine):
            line.starting = starting

    def _build_agent(self, factory: PortFactory) -> None:
        """In the core's thread: build the port, then hand it to the window."""
        with collector_paused(freeze=lambda: self.app.is_running):
            port = self._make_port(factory)
        if port is None:  # said by the bridge; nothing will start: no longer "Starting…"
            try:
                self.app.call_from_thread(self._set_starting, False)
            except RuntimeError:  # the window closed meanwhile
                log.debug("the window closed while the core was built", exc_info=True)
        else:
            self.bridge(notes.AgentReady(port))
            # While the first message's request waits for the model: the first answer's
            # widgets (Markdown: markdown-it, ~70 ms), else imported when its first words come.
            from mm_tui.widgets.answer_blocks import answer_class

            answer_class()

    def _make_port(self, factory: PortFactory) -> AgentPort | None:
        try:
            return factory(self.bridge)
        except Exception as error:  # a bad server or config must not crash the window
            log.exception("the agent could not start")
            self.bridge(Notice("error", AGENT_FAILED.format(error=error)))
            return None
