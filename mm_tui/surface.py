"""The window's drawing surface: what the turn controller and the slash commands may ask of
the screen (`TurnSurface`, `CommandSurface`), done on the app's widgets.

Kept apart from `mm_tui.app` so that the app stays the place where keys and events are wired,
and so that the non-visual parts (`mm_tui.window`) see only this narrow face of the screen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence, Set

from textual.app import App

from mm_tui.agent.events import Notice, NoticeLevel
from mm_tui.agent.port import AgentPort, PermissionState, TopLineView
from mm_tui.support import collector
from mm_tui.widgets.prompt import PromptInput, fold_pastes
from mm_tui.widgets.status_line import QueuedMessages, StatusLine, format_elapsed
from mm_tui.widgets.top_line import TopLine
from mm_tui.widgets.transcript import Transcript
from mm_tui.window.event_bridge import EventBridge, UserMessageShown, WindowNotice


class ScreenSurface:
    """Draws for the controller and the commands; every call is made on the UI thread."""

    def __init__(
        self,
        app: App[int],
        bridge: EventBridge,
        help_keys: Callable[[], Mapping[str, str]] | None = None,
    ) -> None:
        """`bridge`: the road of the core's events, which the window's own lines about a turn
        take too, so that they keep their order. `help_keys`: the keys the `keymap` changed,
        for the help page."""
        self.app = app
        self.bridge = bridge
        self.help_keys = help_keys

    @property
    def transcript(self) -> Transcript:
        return self.app.query_one(Transcript)

    @property
    def status_line(self) -> StatusLine:
        return self.app.query_one(StatusLine)

    def say(self, level: NoticeLevel, text: str) -> None:
        self.bridge(WindowNotice(level, text))

    def show_user_message(self, text: str) -> None:
        shown = fold_pastes(text, self.app.query_one(PromptInput).pastes)  # `[pasted 200 lines]`
        self.bridge(UserMessageShown(shown))

    def show_queue(self, queued: Sequence[str], *, held: bool = False) -> None:
        self.app.query_one(QueuedMessages).show(queued, held=held)
        self.status_line.queued = len(queued)
        self.status_line.held = held

    def show_status(self, state: str, elapsed: float | None) -> None:
        self.status_line.state = state
        self.status_line.elapsed = "" if elapsed is None else format_elapsed(elapsed)

    def show_top_line(self, view: TopLineView) -> None:
        self.app.query_one(TopLine).show(view)

    def keys_changed(self) -> None:
        self.app.refresh_bindings()

    def run_in_thread(
        self, work: Callable[[], None], *, group: str = "default", exclusive: bool = False
    ) -> None:
        self.app.run_worker(
            work, thread=True, group=group, exclusive=exclusive, exit_on_error=False
        )

    def restart_transcript(self, notice: str, then: Callable[[], None]) -> None:
        async def restart() -> None:
            await self.transcript.clear()
            await self.transcript.add_notice("info", notice)
            then()

        self.app.call_later(restart)

    async def show_resumed(self, port: AgentPort) -> None:
        """The conversation the port opened with (--continue, --resume, a replay at speed 0),
        shown at once: built from its history, not played."""
        history = port.resumed_history()
        if history:
            from mm_tui.replay import conversation_events

            await self.transcript.show_past(conversation_events(history))
        # Start-up is over (support/collector.py); the transcript undoes it when the window
        # closes.
        collector.settle()

    async def show_session(self, port: AgentPort | None, said: Sequence[Notice]) -> None:
        """`/resume` went to `port`'s new session (None: it did not): that conversation
        replaces the transcript; then the core's lines about it."""
        if port is not None:
            await self.transcript.clear()
            await self.show_resumed(port)
        for notice in said:
            await self.transcript.add_notice(notice.level, notice.text)

    def open_help(self) -> None:
        from mm_tui.widgets.help_screen import HelpScreen

        if not isinstance(self.app.screen, HelpScreen):
            self.app.push_screen(HelpScreen(self.help_keys() if self.help_keys else None))

    def open_grants(self, state: PermissionState, on_close: Callable[[Set[str]], None]) -> None:
        from mm_tui.widgets.pickers import GrantsScreen

        screen = GrantsScreen(
            set(state.grants), permissions=state.mode, yolo=state.yolo, rules=state.rules
        )
        self.app.push_screen(screen, lambda revoked: on_close(revoked or set()))

    def leave(self) -> None:
        self.app.call_later(self.app.action_quit)

    def transcript_markdown(self) -> str:
        return self.transcript.to_markdown()
