"""The window (SPEC §7): a Textual app that renders the core's events and holds no agent logic.

The Agent runs in a thread worker; its events reach the UI through `EventBridge`. A permission
question's Future is resolved here when the person presses a, s or r.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Footer

from mm_tui.agent.events import (
    WAITING_FOR_MODEL,
    AssistantMessageDone,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    PermissionResolved,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolStarted,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    Usage,
)
from mm_tui.widgets.command_runner import SlashCommandRunner
from mm_tui.widgets.event_bridge import AgentReady, EventBridge, EventsArrived, TurnWorkerDone
from mm_tui.widgets.help_screen import HelpScreen
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.prompt_history import PromptHistory, default_history_path
from mm_tui.widgets.slash_commands import SlashMenu
from mm_tui.widgets.status_line import QueuedMessages, StatusLine
from mm_tui.widgets.tool_row import format_duration
from mm_tui.widgets.top_line import TopLine
from mm_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from mm_tui.agent.config import Config

AgentFactory = Callable[[Callable[[Any], None]], Any]
AGENT_FAILED = "the agent could not start: {error}"
TICK_SECONDS = 0.1
REPLAY_STOPPED = "replay stopped"
ANSWER_KEYS = frozenset(answer.value for answer in PermissionAnswer)


class MMApp(App[int]):
    """mm-tui's window: top line, transcript, status line, prompt, footer."""

    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses live elsewhere
    TITLE = "mm-tui"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", priority=True, id="app.interrupt"),
        Binding("a", "answer('a')", "Allow once", priority=True, id="app.allow_once"),
        Binding("s", "answer('s')", "Allow for session", priority=True, id="app.allow_session"),
        Binding("r", "answer('r')", "Reject", priority=True, id="app.reject"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
    ]

    def __init__(
        self,
        config: Config,
        cwd: Path,
        *,
        agent_factory: AgentFactory | None = None,
        replay_events: list[tuple[float, Any]] | None = None,
        replay_meta: dict[str, str] | None = None,
        history_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        still: bool = False,
    ) -> None:
        """`still`: no cursor blink, no animation, no spinner motion (snapshot tests)."""
        super().__init__()
        self.config = config
        self.cwd = cwd
        self.agent: Any = None
        self.agent_factory = agent_factory
        self.replay_events = replay_events
        self.replay_meta = replay_meta or {}
        self.clock = clock
        self.still = still
        self.bridge = EventBridge(self)
        self.history = PromptHistory(
            history_path if history_path is not None else default_history_path()
        )
        self.queue: deque[str] = deque()
        self.questions: dict[str, PermissionRequest] = {}
        self.turn_running = False
        self.turn_started_at = 0.0
        self.frame = 0
        self.prompt_tokens = 0
        self._echoed_user_text: str | None = None
        self._said_this_turn: set[str] = set()
        self.commands = SlashCommandRunner(self)
        self._replay_stop = threading.Event()
        if still:
            self.animation_level = "none"

    # -- layout ---------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield TopLine(id="top-line")
        yield Transcript(preview_lines=self.config.preview_lines, clock=self.clock)
        yield SlashMenu(id="slash-menu")
        yield QueuedMessages(id="queue")
        yield StatusLine(id="status-line")
        yield PromptInput(self.history, id="prompt")
        yield Footer(show_command_palette=False)

    @property
    def transcript(self) -> Transcript:
        return self.query_one(Transcript)

    @property
    def status_line(self) -> StatusLine:
        return self.query_one(StatusLine)

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.cursor_blink = not self.still
        prompt.focus()
        self.query_one(SlashMenu).display = False
        self.refresh_top_line()
        if not self.still:
            self.set_interval(TICK_SECONDS, self._tick)
        if self.replay_events is not None:
            self._play_replay(self.replay_events)
        elif self.agent_factory is not None:
            # After the first frame: building the Agent imports openai, which would hold the
            # GIL while the window draws itself.
            self.call_after_refresh(self._build_agent)

    def refresh_top_line(self) -> None:
        """Model, server, directory, context used (after each turn and setting change)."""
        agent = self.agent
        model = self.replay_meta.get("model") or self.config.model or ""
        server = self.replay_meta.get("base_url") or self.config.base_url
        used, window = self.prompt_tokens, self.config.context_window or 0
        cwd = Path(self.replay_meta.get("cwd") or self.cwd)
        mode = "replay" if self.replay_events is not None else ""
        if agent is not None:
            model = getattr(agent, "model", None) or model
            server = getattr(agent, "base_url", None) or server
            used = getattr(agent, "context_tokens", used)
            window = getattr(agent, "context_window", window)
            if getattr(agent, "yolo", False):
                mode = "yolo"
        self.query_one(TopLine).show(
            model=model, server=server, cwd=cwd, used=used, window=window, mode=mode
        )

    def _tick(self) -> None:
        if not self.turn_running:
            return
        self.frame += 1
        self.status_line.frame = self.frame
        self.status_line.elapsed = format_duration(self.clock() - self.turn_started_at)
        for row in self.transcript.running_rows():
            row.tick(self.frame)

    # -- the agent and its turns ----------------------------------------------------------

    @work(thread=True, exit_on_error=False, group="agent")
    def _build_agent(self) -> None:
        assert self.agent_factory is not None
        try:
            agent = self.agent_factory(self.bridge)
        except Exception as error:  # a bad server or config must not crash the window
            self.bridge(Notice("error", AGENT_FAILED.format(error=error)))
            return
        self.bridge(AgentReady(agent))

    @work(thread=True, exclusive=True, exit_on_error=False, group="turn")
    def _run_turn(self, text: str) -> None:
        try:
            ended = self.agent.run_turn(text)
        except Exception as error:  # SPEC §3: an error ends the turn, never the window
            ended = TurnEnded("error", f"{type(error).__name__}: {error}")
        self.bridge(TurnWorkerDone(ended))

    @work(thread=True, exclusive=True, exit_on_error=False, group="turn")
    def _play_replay(self, events: list[tuple[float, Any]]) -> None:
        for delay, event in events:
            if self._replay_stop.wait(delay) if delay > 0 else self._replay_stop.is_set():
                self.bridge(Notice("info", REPLAY_STOPPED))
                self.bridge(SpinnerChanged(""))
                self.bridge(TurnEnded("interrupted"))
                return
            self.bridge(event)

    def start_turn(self, text: str) -> None:
        """Send a message now: show it, start the spinner, run the turn in a worker."""
        self.turn_running = True
        self._said_this_turn.clear()
        self.turn_started_at = self.clock()
        self._echoed_user_text = text
        self.status_line.state = WAITING_FOR_MODEL
        self.status_line.elapsed = format_duration(0)
        self.call_later(self.transcript.add_user_message, text)
        self.refresh_bindings()
        self._run_turn(text)

    def _start_next_queued(self) -> None:
        if self.queue and not self.turn_running and self.agent is not None:
            text = self.queue.popleft()
            self._show_queue()
            self.start_turn(text)

    def _show_queue(self) -> None:
        self.query_one(QueuedMessages).show(self.queue)
        self.status_line.queued = len(self.queue)

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        if self.commands.handle(message.text):
            return
        if self.replay_events is not None:
            self.call_later(self.transcript.add_notice, "info", "a replay has no model to answer")
            return
        self.queue.append(message.text)
        self._show_queue()
        self._start_next_queued()

    @on(PromptInput.Changed)
    def _prompt_changed(self, message: PromptInput.Changed) -> None:
        self.query_one(SlashMenu).show_matches(message.text_area.text)

    # -- events from the core -------------------------------------------------------------

    @on(EventsArrived)
    async def _events_arrived(self) -> None:
        for event in self.bridge.take():
            await self.apply_event(event)

    async def apply_event(self, event: Any) -> None:
        """Render one event of `mm_tui.agent.events` (or of the app's own workers)."""
        transcript = self.transcript
        match event:
            case TextDelta(text=text):
                await transcript.add_text(text)
            case ToolOutputDelta(call_id=call_id, text=text):
                if (row := transcript.rows.get(call_id)) is not None:
                    row.add_output(text)
            case SpinnerChanged(state=state):
                self.status_line.state = state
            case ReasoningDelta(text=text):
                await transcript.add_reasoning(text)
            case AssistantMessageDone():
                await transcript.end_message()
            case TurnStarted(text=text):
                self._turn_started(text)
                if self._echoed_user_text != text:
                    await transcript.add_user_message(text)
                self._echoed_user_text = None
            case ToolStarted():
                (await transcript.start_tool(event)).tick(self.frame)
            case PermissionRequest(call_id=call_id):
                self.questions[call_id] = event
                await transcript.ask(event)
                self.refresh_bindings()
            case PermissionResolved(call_id=call_id, answer=answer, automatic=automatic):
                self.questions.pop(call_id, None)
                if (row := transcript.rows.get(call_id)) is not None:
                    row.resolve(answer, automatic)
                self.refresh_bindings()
            case ToolFinished(call_id=call_id):
                self.questions.pop(call_id, None)
                await transcript.finish_tool(event)
            case Notice(level=level, text=text):
                self._said_this_turn.add(text)
                await transcript.add_notice(level, text)
            case Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens):
                self.prompt_tokens = prompt_tokens + completion_tokens
                self.refresh_top_line()
            case TurnSummary():
                await transcript.add_summary(event)
            case TurnEnded():
                await self._turn_ended(event)
            case TurnWorkerDone(ended=ended):
                if self.turn_running:
                    await self._turn_ended(ended)
                self._start_next_queued()
            case AgentReady(agent=agent):
                self.agent = agent
                for notice in getattr(agent, "startup_notices", []):
                    await transcript.add_notice(notice.level, notice.text)
                self.refresh_top_line()
                self._start_next_queued()

    def _turn_started(self, text: str) -> None:
        if not self.turn_running:  # a replay, or a turn the app did not start itself
            self.turn_running = True
            self._said_this_turn.clear()
            self.turn_started_at = self.clock()
            self.refresh_bindings()

    async def _turn_ended(self, ended: TurnEnded) -> None:
        await self.transcript.end_message()
        if ended.error and ended.error not in self._said_this_turn:
            await self.transcript.add_notice("error", ended.error)
        self.turn_running = False
        self._said_this_turn.clear()
        self.questions.clear()
        self.status_line.state = ""
        self.status_line.elapsed = ""
        self.refresh_bindings()
        self.refresh_top_line()

    # -- keys -----------------------------------------------------------------------------

    def refresh_bindings(self) -> None:
        """Also lend a/s/r from the prompt to the app while a question is open."""
        if self.is_mounted:
            prompt = self.query_one(PromptInput)
            prompt.reserved_keys = ANSWER_KEYS if self.questions else frozenset()
        super().refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_main_screen = len(self.screen_stack) == 1
        if action == "answer":
            return bool(self.questions) and on_main_screen
        if action == "interrupt":
            return self.turn_running and on_main_screen
        return True

    def on_key(self, event: events.Key) -> None:
        """A character typed while a row has the focus goes to the prompt, as expected."""
        prompt = self.query_one(PromptInput)
        if (
            event.is_printable
            and event.character
            and self.focused is not prompt
            and len(self.screen_stack) == 1
            and event.key not in self.active_bindings  # space folds a focused row
        ):
            event.stop()
            prompt.focus()
            prompt.insert(event.character)

    def action_answer(self, key: str) -> None:
        """a / s / r: answer the oldest open question (SPEC §7)."""
        if not self.questions:
            return
        call_id, request = next(iter(self.questions.items()))
        answer = PermissionAnswer(key)
        del self.questions[call_id]
        if not request.future.done():
            request.future.set_result(answer)
        if (row := self.transcript.rows.get(call_id)) is not None:
            row.resolve(answer, automatic=False)
        self.refresh_bindings()

    def action_interrupt(self) -> None:
        """Esc: interrupt the turn (SPEC §3); the core closes the stream and ends commands."""
        if self.agent is not None and self.turn_running:
            self.agent.cancel()
        elif self.replay_events is not None:
            self._replay_stop.set()

    def action_help_quit(self) -> None:
        """Ctrl+C with no selection: interrupt the turn, else say how to quit."""
        if self.turn_running:
            self.action_interrupt()
        else:
            super().action_help_quit()

    def action_help(self) -> None:
        """F1 or /help."""
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        """Ctrl+Q: interrupt the turn, then leave; `run_app` stops servers and commands."""
        if self.agent is not None and self.turn_running:
            self.agent.cancel()
        self.exit(0)


def _make_agent_factory(
    config: Config, cwd: Path, resume: Path | str | None, continue_last: bool
) -> AgentFactory:
    def factory(sink: Callable[[Any], None]) -> Any:
        from mm_tui.agent.agent import Agent

        options: dict[str, Any] = {}
        if resume is not None:
            options["resume"] = str(resume)
        if continue_last:
            options["continue_last"] = True
        return Agent(config, sink, cwd, **options)

    return factory


def run_app(
    config: Config,
    cwd: Path,
    *,
    resume: Path | str | None = None,
    continue_last: bool = False,
    replay: Path | None = None,
    demo: bool = False,
) -> int:
    """Open the window and return the exit status (the CLI's entry point)."""
    if demo or replay is not None:
        from mm_tui.replay import ReplayError, demo_path, load_replay

        try:
            events, meta = load_replay(demo_path() if demo else replay)  # type: ignore[arg-type]
        except ReplayError as error:
            print(f"mm-tui: {error}", file=sys.stderr)
            return 2
        app = MMApp(config, cwd, replay_events=events, replay_meta=meta)
    else:
        factory = _make_agent_factory(config, cwd, resume, continue_last)
        app = MMApp(config, cwd, agent_factory=factory)
    try:
        status = app.run()
    finally:
        if app.agent is not None:
            app.agent.close()
    return status if isinstance(status, int) else app.return_code or 0
