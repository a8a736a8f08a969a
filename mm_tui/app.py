"""The window (SPEC §7): a Textual app that renders the core's events and holds no agent logic.

The core (the Agent, or a replay source) sits behind `AgentPort`, reached only through
`self.turns` (TurnController); events come through `EventBridge`, slash commands from
`window.commands`; both draw through `mm_tui.surface.ScreenSurface`.

One App class, no base classes of its own. Its screen (`app_parts.screen.WindowScreen`) names
the conversation's widgets and handles what they send up that only moves them; the app holds
its other parts as plain objects: `CoreStart`
(how the core is built), `Clock` (the ticks while a turn runs), `Preferences` (palette, theme,
keymap, notifications). Textual asks the App for bindings, actions, message handlers and
system commands; those stay here and hand the work to the parts. The module is longer than
the house limit on purpose: one class read in one place (tests/architecture lists it)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, assert_never

from textual import events, on
from textual.actions import SkipAction
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from mm_tui.agent.events import (
    AssistantMessageDone,
    Notice,
    PermissionRequest,
    PermissionResolved,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolRunning,
    ToolStarted,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    Usage,
)
from mm_tui.app_parts.clock import Clock
from mm_tui.app_parts.preferences import Preferences, binding_owners
from mm_tui.app_parts.screen import WindowScreen, open_viewer
from mm_tui.app_parts.start import CoreStart
from mm_tui.surface import ScreenSurface
from mm_tui.widgets.permission import PermissionQuestion, RejectionReason
from mm_tui.widgets.prompt import PromptInput, remember_paste
from mm_tui.widgets.prompt_history import PromptHistory, default_history_path
from mm_tui.widgets.slash_menu import SlashMenu
from mm_tui.widgets.status_line import StatusLine
from mm_tui.widgets.transcript import Transcript
from mm_tui.window import event_bridge as notes
from mm_tui.window.commands import SlashCommands
from mm_tui.window.notifications import QUESTION_WAITS, TURN_DONE, TURN_FAILED
from mm_tui.window.ports import PortFactory, config_view
from mm_tui.window.turns import TurnController

if TYPE_CHECKING:
    from mm_tui.agent.config import Config
    from mm_tui.widgets.first_run import FirstRunPanel, ServerCheck
    from mm_tui.window.project_trust import ProjectTrust

log = logging.getLogger(__name__)


def _scroll(key: str, where: str, description: str) -> Binding:
    """A scrollback key that works while the prompt has the focus."""
    return Binding(
        key,
        f"scroll_transcript('{where}')",
        description,
        show=False,
        priority=True,
        id=f"app.{where}",
    )


class MMApp(App[int]):
    """mm-tui's window: top line, transcript, status line, prompt, footer.

    It wires keys and events; `self.turns` (a `TurnController`) owns the turn state and the
    port to the core, and draws through `self.surface` (a `ScreenSurface`).
    """

    CSS_PATH = Path(__file__).parent / "app.tcss"  # absolute: subclasses live elsewhere
    TITLE = "mm-tui"
    _settling = False  # events arrived; they are taken `SETTLE_SECONDS` after the first
    _settle_at = 0.0  # (or as `self.pace` says): when, on time.monotonic
    ENABLE_COMMAND_PALETTE = True
    BINDINGS = [
        _scroll("pageup,shift+pageup", "page_up", "Page up"),
        _scroll("pagedown,shift+pagedown", "page_down", "Page down"),
        _scroll("ctrl+home", "top", "Top"),
        _scroll("ctrl+end", "bottom", "Bottom"),
        Binding(
            "ctrl+p",
            "command_palette",
            "Commands",
            show=False,
            priority=True,
            id="app.command_palette",
        ),
        Binding("escape", "interrupt", "Interrupt", priority=True, id="app.interrupt"),
        Binding("f2", "focus_question", "Answer", id="app.focus_question"),
        Binding("alt+up", "edit_queued", "Edit queued", priority=True, id="app.edit_queued"),
        Binding("f1", "help", "Help", id="app.help"),
        Binding("ctrl+q", "quit", "Quit", priority=True, id="app.quit"),
    ]

    def __init__(
        self,
        config: Config,
        cwd: Path,
        *,
        agent_factory: PortFactory | None = None,
        build_in_worker: bool = True,
        history_path: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        still: bool = False,
        first_run: ServerCheck | None = None,
        trust: ProjectTrust | None = None,
        pick_session: bool = False,
    ) -> None:
        """`agent_factory` builds the port (the Agent, or a replay source) with the app's sink:
        in a worker after the first frame (the Agent imports openai), or at mount when
        `build_in_worker` is False (a replay: its top line is right from the first frame).
        `still`: no cursor blink, no animation, no spinner motion (snapshot tests).
        `first_run`: the server check whose findings open the empty transcript.
        `trust`: a project to ask about before the core is built (agent/trust.py).
        `pick_session`: open `/resume`'s picker once the core is ready (`--resume` alone)."""
        super().__init__()
        self.config = config
        self.cwd = cwd
        self.clock = clock
        self.still = still
        self.first_run = first_run
        self.pick_session = pick_session
        self.bridge = notes.EventBridge(self)
        self.pace = notes.TakePace()  # when the bridge's events are taken
        self.history = PromptHistory(
            history_path if history_path is not None else default_history_path()
        )
        self.preferences = Preferences(
            self,
            lambda: self.config,
            lambda level, text: self.surface.say(level, text),
            lambda text: self.commands.handle(text),
            self.binding_owners,
            lambda: self.preferences_env,
        )
        self.surface = ScreenSurface(self, self.bridge, self.preferences.remapped_keys)
        self.turns = TurnController(self.surface, self.bridge, config_view(config, cwd), clock)
        self.commands = SlashCommands(self.turns, self.surface, cwd)
        self.ticker = Clock(self, self.turns, self.bridge, self.take_due_events, self.pace)
        self.starter = CoreStart(
            self,
            agent_factory,
            build_in_worker=build_in_worker,
            trust=trust,
            parts=(self.bridge, self.turns, self.surface),
            obeyed=self._config_obeyed,
        )
        if still:
            self.animation_level = "none"

    #: The environment the user's config is found in (XDG_CONFIG_HOME); tests give their own.
    preferences_env: Mapping[str, str] | None = None

    @classmethod
    def binding_owners(cls) -> tuple[type, ...]:
        """Every class whose bindings have ids a `keymap` may name."""
        return (cls, *binding_owners())

    # -- layout and start-up --------------------------------------------------------------

    def get_default_screen(self) -> Screen[None]:
        return WindowScreen(
            self.history,
            self.cwd,
            preview_lines=self.config.preview_lines,
            clock=self.clock,
            full_output=self.full_output,
        )

    def compose(self) -> ComposeResult:
        screen = self.screen
        assert isinstance(screen, WindowScreen)
        yield from screen.conversation()

    # Looked up once: a query walks the DOM (every mounted block), and a long replay sends
    # tens of thousands of events, a turn ten ticks a second.
    @property
    def transcript(self) -> Transcript:
        return self.ticker.widgets()[0]

    @property
    def status_line(self) -> StatusLine:
        return self.ticker.widgets()[1]

    @property
    def prompt(self) -> PromptInput:
        return self.ticker.widgets()[2]

    @property
    def frame(self) -> int:
        """The spinner's frame (the clock numbers them)."""
        return self.ticker.frame

    @property
    def flowing(self) -> bool:
        """The model's text flows: nothing animates (the spinner, the prompt's cursor)."""
        return self.ticker.flowing

    @property
    def core_thread(self) -> threading.Thread | None:
        """The thread building the core: None until the first frame is drawn (or without one)."""
        return self.starter.core_thread

    def _config_obeyed(self, config: Config) -> None:
        """The project is trusted: its config, loaded again, is the window's."""
        self.config = config

    def read_typeahead_first(self, typed: str) -> None:
        """Keys typed before the window could read them are read before the terminal."""
        self.starter.read_typeahead_first(typed)

    def on_typeahead_read(self) -> None:
        """The driver's `TypeaheadRead` (by name: its module loads only with typeahead)."""
        self.starter.typeahead_read()

    def on_ready(self) -> None:
        """Textual's `Ready`: the first frame is on screen, the core's build starts now."""
        self.starter.ready()

    @on(notes.Ticked)
    async def _tick(self) -> None:
        await self.ticker.tick()

    def on_mount(self) -> None:
        prompt = self.query_one(PromptInput)
        prompt.cursor_blink = not self.still
        prompt.focus()
        self.preferences.apply()
        self.query_one(SlashMenu).display = False
        if self.first_run is not None:
            from mm_tui.widgets.first_run import FirstRunPanel

            self.transcript.mount(FirstRunPanel(self.first_run, url=self.config.base_url))
        self.starter.start()  # a replay now; the live core once the first frame is drawn
        self.turns.refresh_top_line()
        if not self.still:
            self.ticker.start()

    def on_unmount(self) -> None:
        """The window closes, whatever closes it: a turn still running stops (a question left
        open would hold the core's thread, and with it the process, forever)."""
        self.turns.window_closed()

    def on_first_run_panel_checked(self, message: FirstRunPanel.Checked) -> None:
        """The server check named the model a first turn will use: the top line says it now,
        not after that turn (by name: the panel's module loads after the first frame)."""
        self.turns.model_found(message.check.model)

    def full_output(self, call_id: str) -> str | None:
        """The core's kept copy of a call's whole output (Ctrl+O on a row)."""
        return self.turns.full_output(call_id)

    # -- the prompt -----------------------------------------------------------------------

    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        if not self.commands.handle(message.text):
            self.turns.submit(message.text)

    @on(PromptInput.Changed)
    def _prompt_changed(self, message: PromptInput.Changed) -> None:
        self.query_one(SlashMenu).show_matches(message.text_area.text)

    # -- the permission question: it takes the keys unless you type; F2 goes to it ---------

    @on(PermissionQuestion.Answered)
    def _question_answered(self, message: PermissionQuestion.Answered) -> None:
        self._question_closed(message.call_id)
        self.action_answer(message.key, message.reason, message.call_id)

    def _question_closed(self, call_id: str) -> None:
        """The next open question takes the keys it had, or the prompt does (before its row
        folds it away: Textual would give them to the row)."""
        screen = self.screen_stack[0]
        if isinstance(screen, WindowScreen):
            screen.question_closed(call_id)

    def action_focus_question(self) -> None:
        """F2: go to the open question to answer it (at once: F2 is deliberate)."""
        questions = self.query(PermissionQuestion)
        if questions:
            questions.first().take_keys(guarded=False)

    # -- events from the core -------------------------------------------------------------

    @on(notes.EventsArrived)
    def _events_arrived(self) -> None:
        """The first event of a burst: the rest comes within `SETTLE_SECONDS`, and all are
        taken then, together (the clock's tick may take them sooner)."""
        self.ticker.wake()
        wait = notes.SETTLE_SECONDS if self.bridge.urgent else self.pace.wait()
        now = time.monotonic()
        if not self._settling or self._settle_at - now > wait:  # an urgent one: sooner
            self._settling, self._settle_at = True, now + wait
            self.set_timer(wait, lambda: self.post_message(notes.EventsSettled()))

    @property
    def events_waiting(self) -> bool:
        """Events from the core arrived that are not shown yet (a settling burst included)."""
        return self._settling or self.bridge.pending

    @on(notes.EventsSettled)
    async def _events_settled(self) -> None:
        self._settling = False
        await self.take_events()

    async def take_due_events(self) -> None:
        """The tick's take: deltas held for it, and events announced if within the pace."""
        if not (self._settling or self.bridge.announced) or self.pace.due():
            await self.take_events()

    async def take_events(self) -> None:
        self.pace.taken()
        with self.batch_update():  # the events' changes drawn in one frame, after one layout
            for event in self.bridge.take():
                if not self.is_running:  # shutting down: the widgets are gone, a worker talks
                    return
                await self.apply_event(event)
            await self.transcript.flush()  # the batch's new blocks mounted together, now
        self.call_after_refresh(self.pace.drawn)  # what the take cost, its frame included
        # The answer is on screen: its next deltas wait for the tick (EventBridge).
        self.bridge.hold_deltas = self.transcript.clocked and self.transcript.streaming

    async def apply_event(self, event: notes.WindowEvent) -> None:
        """Render one event of `mm_tui.agent.events` (or a note of the window's workers)."""
        transcript = self.transcript
        turns = self.turns
        match event:
            case TextDelta(text=text):
                await transcript.add_text(text)
            case ToolOutputDelta(call_id=call_id, text=text):
                if (row := transcript.rows.get(call_id)) is not None:
                    row.add_output(text)
                if (viewer := open_viewer(self)) is not None and viewer.call_id == call_id:
                    viewer.append(text)
            case SpinnerChanged(state=state):
                self.status_line.state = state
            case ReasoningDelta(text=text):
                await transcript.add_reasoning(text)
            case AssistantMessageDone():
                await transcript.end_message()
            case TurnStarted(text=text):
                if turns.turn_started(text):
                    await transcript.add_user_message(text)
            case ToolStarted():
                (await transcript.start_tool(event)).tick(self.frame)
            case PermissionRequest():
                turns.question_opened(event)
                await transcript.ask(event)
                self.notify_if_away(QUESTION_WAITS.format(what=event.title))
                self.refresh_bindings()
            case ToolRunning():
                pass  # the row runs from ToolStarted; a question's answer is PermissionResolved
            case PermissionResolved(call_id=call_id, answer=answer, automatic=automatic):
                self._question_closed(call_id)
                if (row := transcript.rows.get(call_id)) is not None:
                    row.resolve(answer, automatic)
                turns.question_resolved(call_id)
            case ToolFinished(call_id=call_id):
                turns.tool_finished(call_id)
                self._question_closed(call_id)  # an interrupt closes a question too
                await transcript.finish_tool(event)
            case Notice(level=level, text=text):
                turns.said(text)
                await transcript.add_notice(level, text)
            case Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens):
                turns.usage(prompt_tokens, completion_tokens)
            case TurnSummary():
                await transcript.add_summary(event)
            case TurnEnded():
                await self._turn_ended(event)
            case notes.UserMessageShown(text=text):
                await transcript.add_user_message(text)
            case notes.WindowNotice(level=level, text=text):
                await transcript.add_notice(level, text)
            case notes.TurnWorkerDone(ended=ended):
                if turns.running:
                    await self._turn_ended(ended)
                turns.start_next()
            case notes.AgentReady(port=port):
                self.status_line.starting = False
                said = turns.port_ready(port)
                # A message typed meanwhile goes to the model first: its request then waits
                # on the server while the window draws. What it shows comes through the
                # bridge, after the conversation and the notices drawn here.
                turns.start_next()
                await self.surface.show_resumed(port)
                for notice in said:
                    await transcript.add_notice(notice.level, notice.text)
                turns.refresh_top_line()
                if self.pick_session:
                    turns.resume("")
            case notes.ModelsListed(models=models, current=current):
                from mm_tui.widgets.pickers import ModelPicker

                self.push_screen(ModelPicker(list(models), current), turns.choose_model)
            case notes.TopLineChanged():
                turns.refresh_top_line()
            case notes.UndoDone(result=result):
                if (typed := turns.undone(result)) is not None:
                    self.query_one(PromptInput).put_back(typed)
            case notes.SessionsListed(sessions=sessions, current=current):
                from mm_tui.widgets.session_picker import SessionPicker

                picker = SessionPicker(sessions, current, blink=not self.still)
                self.push_screen(picker, turns.choose_session)
            case notes.SessionOpened(notices=said, switched=switched):
                await self.surface.show_session(turns.port if switched else None, said)
                turns.refresh_top_line()
            case _:
                assert_never(event)

    async def _turn_ended(self, ended: TurnEnded) -> None:
        await self.transcript.end_message()
        error = self.turns.turn_ended(ended)
        if error is not None:
            await self.transcript.add_notice("error", error)
        if ended.reason != "interrupted":  # the person who interrupted is here
            self.notify_if_away(TURN_FAILED.format(reason=error) if error else TURN_DONE)

    def notify_if_away(self, text: str) -> None:
        """A turn ended or a question waits: bell and desktop notification if unfocused."""
        self.preferences.notify_if_away(text)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The palette (Ctrl+P): every slash command, and the theme."""
        return self.preferences.system_commands()

    # -- keys -----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        on_main_screen = len(self.screen_stack) == 1
        if action == "focus_question":
            return bool(self.turns.questions) and on_main_screen
        if action == "interrupt":  # Esc in a rejection's reason goes back to a/s/r
            return self.turns.running and on_main_screen and not self._typing_a_reason()
        if action == "edit_queued":
            return bool(self.turns.queue) and on_main_screen
        if action == "command_palette":  # its commands act on the conversation
            return on_main_screen
        return super().check_action(action, parameters)

    def _typing_a_reason(self) -> bool:
        return isinstance(self.focused, RejectionReason)

    def on_key(self, event: events.Key) -> None:
        """A character typed while a row or a question has the focus goes to the prompt, as
        expected (a question's a/s/r too, in the moment after it took the keys).

        A key that came up to the window was not taken by the prompt (it takes every
        character): it was typed while something else had the focus, maybe the moment
        before the prompt got it, so it goes to the prompt whatever has the focus now."""
        if not (event.is_printable and event.character and len(self.screen_stack) == 1):
            return
        bound = self.active_bindings.get(event.key)  # space folds a focused row
        if bound is None or not bound.enabled:  # disabled: a question's a/s/r in its guard
            prompt = self.query_one(PromptInput)
            event.stop()
            # Focused now, not after the keys already queued: a paste the terminal sends as
            # keys would have its spaces and Enter taken by the row as fold keys.
            self.screen.set_focus(prompt)
            prompt.typing()
            prompt.insert(event.character)

    def on_paste(self, event: events.Paste) -> None:
        """A paste while a row has the focus goes to the prompt too."""
        prompt = self.query_one(PromptInput)
        focused = self.focused
        # No focus yet (start-up): the screen hands the paste to the prompt itself.
        if focused is not None and focused is not prompt and len(self.screen_stack) == 1:
            event.stop()
            prompt.focus()
            prompt.typing()
            remember_paste(prompt.pastes, event.text)
            prompt.insert(event.text)

    def action_scroll_transcript(self, where: str) -> None:
        """PageUp/PageDown (with or without Shift), Ctrl+Home/End, End: move the transcript.

        On another screen (a viewer, a picker) the key goes on to that screen."""
        if len(self.screen_stack) != 1:
            raise SkipAction()
        self.query_one(Transcript).scroll_by_key(where)

    def action_answer(self, key: str, reason: str = "", call_id: str | None = None) -> None:
        """a / s / r: answer the question of `call_id` (the oldest open one by default; SPEC §7);
        `reason`: why it was rejected."""
        answered = self.turns.answer(key, reason, call_id)
        if answered is None:
            return
        call_id, answer = answered
        if (row := self.transcript.rows.get(call_id)) is not None:
            row.resolve(answer, automatic=False)

    def action_edit_queued(self) -> None:
        """Alt+↑: the newest queued message back in the prompt, to edit."""
        text = self.turns.edit_queued()
        if text is not None:
            prompt = self.query_one(PromptInput)
            prompt.put_back(text)
            prompt.focus()

    def action_interrupt(self) -> None:
        """Esc: interrupt the turn, or stop the replay (SPEC §3)."""
        self.turns.interrupt()

    def action_help_quit(self) -> None:
        """Ctrl+C with no selection: interrupt the turn, else say how to quit."""
        if self.turns.running:
            self.action_interrupt()
        else:
            super().action_help_quit()

    def action_help(self) -> None:
        """F1 or /help."""
        self.surface.open_help()

    async def action_quit(self) -> None:
        """Ctrl+Q: interrupt the turn, then leave; `run_app` stops servers and commands."""
        self.turns.quit()
        self.exit(0)
