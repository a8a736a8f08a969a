"""The window's turns: one object owns their state and is the only road to the core.

`TurnController` holds what the window knows about turns (the queue of messages, whether one
runs and since when, the open permission questions, what was said this turn, the echoed user
text, the tokens counted before the core is ready) and the `AgentPort`. Keys and slash commands
call its intents; events from the core tell it what happened. It draws nothing itself: it asks a
`TurnSurface` (the app) to show things and to run blocking calls in thread workers. The queue
lives in `message_queue`, the settings intents (yolo, permissions, model) in `settings_intents`,
`/resume`'s in `session_intents`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from mm_tui.agent.events import (
    WAITING_FOR_MODEL,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    TurnEnded,
    running_state,
)
from mm_tui.agent.port import AgentPort, TopLineView
from mm_tui.window.event_bridge import TurnWorkerDone, UndoDone, WindowEvent
from mm_tui.window.message_queue import MessageQueue
from mm_tui.window.open_questions import OpenQuestions
from mm_tui.window.session_intents import SessionIntents
from mm_tui.window.turn_surface import TurnSurface
from mm_tui.window.undo_lines import undo_lines

if TYPE_CHECKING:
    from mm_tui.agent.checkpoints import UndoResult

log = logging.getLogger(__name__)

TURN_RUNNING = "a turn is running — press Esc to interrupt it first"
AGENT_NOT_READY = "{command}: the agent is not ready yet"
COMPACTING = "Compacting the history"
COMPACT_UNAVAILABLE = "/compact is not available yet"
QUEUE_KEPT = (
    "{count} kept — Alt+↑ takes the last back to edit, /queue sends them, /queue clear drops them"
)
QUEUE_EMPTY = "/queue: no message is waiting"
QUEUE_CLEARED = "/queue: dropped {count}"


def messages(count: int) -> str:
    """`1 queued message`, `3 queued messages`."""
    return f"{count} queued message{'' if count == 1 else 's'}"


TYPED_KEPT = 50  # messages whose typed form `/undo` can give back

#: The intent of sending a message to the model, as `RefusingPort.refusal` names it.
MESSAGE = "message"
#: `!command`: a shell command of the person's, through the bash tool.
SHELL = "!"
SHELL_USAGE = (
    "usage: !command — runs it with the bash tool, under the same permissions (e.g. !ls -la); "
    "its output goes along with your next message"
)


@runtime_checkable
class RefusingPort(Protocol):
    """A port that cannot do some intents at all (a replay has no model): it says so at once.

    The live `Agent` can do everything and does not implement this.
    """

    def refusal(self, intent: str) -> Notice | None:
        """The line to say instead of `intent` (a slash command, or `MESSAGE`); None: go on."""
        ...


class TurnController(SessionIntents):
    """Turn state of the window and its intents; every call to the core goes through here."""

    def __init__(
        self,
        surface: TurnSurface,
        sink: Callable[[WindowEvent], None],
        start_view: TopLineView,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`start_view`: what the top line shows from the config before the core is ready."""
        super().__init__(surface, sink)
        self.start_view = start_view
        self.clock = clock
        self.queue = MessageQueue()
        self.questions = OpenQuestions()
        self.running = False
        self.started_at = 0.0
        self.prompt_tokens = 0
        self._echoed: str | None = None
        self._said: set[str] = set()
        self._typed: dict[str, str] = {}  # the message sent (files attached) -> as typed

    # -- the port and the top line --------------------------------------------------------

    def port_ready(self, port: AgentPort) -> list[Notice]:
        """The core is built; returns what it has to say at start."""
        self.port = port
        return list(port.startup_notices)

    def top_line(self) -> TopLineView:
        """The port's view, with the config's model and server where the port has none."""
        if self.port is None:
            return replace(self.start_view, used=self.prompt_tokens)
        view = self.port.top_line()
        return replace(
            view,
            model=view.model or self.start_view.model,
            server=view.server or self.start_view.server,
        )

    def refresh_top_line(self) -> None:
        self.surface.show_top_line(self.top_line())

    def model_found(self, model: str) -> None:
        """The server check's model, none configured: on the top line until the core has one."""
        if model and not self.start_view.model:
            self.start_view = replace(self.start_view, model=model)
            self.refresh_top_line()

    def full_output(self, call_id: str) -> str | None:
        """A call's whole output kept by the core (None: the row's output is all there is)."""
        return None if self.port is None else self.port.full_output(call_id)

    def elapsed(self) -> float:
        """Seconds since the running turn started."""
        return self.clock() - self.started_at

    def _refusal(self, intent: str) -> Notice | None:
        port = self.port
        return port.refusal(intent) if isinstance(port, RefusingPort) else None

    def _port_for(self, command: str, *, idle: bool = False) -> AgentPort | None:
        """The port, or None after saying why `command` cannot run now."""
        refusal = self._refusal(command)
        if refusal is not None:
            self.surface.say(refusal.level, refusal.text)
            return None
        if self.port is None:
            self.surface.say("warning", AGENT_NOT_READY.format(command=command))
            return None
        if idle and self.running:
            self.surface.say("warning", TURN_RUNNING)
            return None
        return self.port

    def ready_for(self, command: str, *, idle: bool = False) -> bool:
        """Whether `command` can run now; False after saying why not."""
        return self._port_for(command, idle=idle) is not None

    # -- messages and turns ---------------------------------------------------------------

    def submit(self, text: str) -> None:
        """A message for the model (or a `!command`): queued, and sent at once when nothing
        runs."""
        shell = text.startswith(SHELL)
        refusal = self._refusal(SHELL if shell else MESSAGE)
        if refusal is not None:
            self.surface.say(refusal.level, refusal.text)
            return
        if shell and not text[1:].strip():
            self.surface.say("warning", SHELL_USAGE)
            return
        self.queue.release()  # a new message goes after the kept ones, which go first
        self.queue.append(text)
        if not self.start_next():
            self._show_queue()

    def start_next(self) -> bool:
        """Send the oldest queued message if no turn runs and the core is ready; whether it
        was sent."""
        if not (self.queue.ready() and not self.running and self.port is not None):
            return False
        text = self.queue.popleft()
        self._show_queue()
        if text.startswith(SHELL):
            self._start_command(self.port, text)
        else:
            self._start_turn(self.port, text)
        return True

    def _show_queue(self) -> None:
        self.surface.show_queue(list(self.queue), held=self.queue.held)
        self.surface.keys_changed()  # Alt+↑ works while a message waits

    def edit_queued(self) -> str | None:
        """Alt+↑: the newest waiting message, taken out of the queue to be edited."""
        text = self.queue.take_last()
        if text is not None:
            if not self.queue:
                self.queue.release()
            self._show_queue()
        return text

    def send_queue(self) -> None:
        """`/queue`: the messages kept after Esc go, oldest first."""
        if not self.queue:
            self.surface.say("info", QUEUE_EMPTY)
            return
        self.queue.release()
        self._show_queue()
        self.start_next()

    def clear_queue(self) -> None:
        """`/queue clear`: drop every waiting message."""
        count = self.queue.clear()
        if not count:
            self.surface.say("info", QUEUE_EMPTY)
            return
        self._show_queue()
        self.surface.say("info", QUEUE_CLEARED.format(count=messages(count)))

    def _start_turn(self, port: AgentPort, text: str) -> None:
        self.running = True
        self._said.clear()
        self.started_at = self.clock()
        from mm_tui.agent.attachments import attach_mentions  # with the first message

        attached = attach_mentions(text, self.start_view.cwd)  # `@path`: the file goes along
        self._echoed = attached.for_model
        self._typed[attached.for_model] = text  # `/undo` gives back what was typed
        while len(self._typed) > TYPED_KEPT:
            del self._typed[next(iter(self._typed))]
        self.surface.show_status(WAITING_FOR_MODEL, 0.0)
        self.surface.show_user_message(text)
        for note in attached.notes:
            self.surface.say("info", note)
        self.surface.keys_changed()
        sent = attached.for_model
        self.surface.run_in_thread(lambda: self._run_turn(port, sent), group="turn", exclusive=True)

    def _run_turn(self, port: AgentPort, text: str) -> None:
        """In a worker thread: the whole turn, then a note that it returned."""
        try:
            ended = port.run_turn(text)
        except Exception as error:  # SPEC §3: an error ends the turn, never the window
            log.exception("run_turn raised")
            ended = TurnEnded("error", f"{type(error).__name__}: {error}")
        self.sink(TurnWorkerDone(ended))

    def _start_command(self, port: AgentPort, text: str) -> None:
        """`!command`: runs like a turn (Esc interrupts, messages queue), in the turn worker."""
        self.running = True
        self._said.clear()
        self.started_at = self.clock()
        self.surface.show_status(running_state("bash"), 0.0)
        self.surface.show_user_message(text)
        self.surface.keys_changed()
        command = text[len(SHELL) :].strip()
        self.surface.run_in_thread(
            lambda: self._run_command(port, command), group="turn", exclusive=True
        )

    def undo(self, force: bool) -> None:
        """`/undo [force]`: the core puts back the last turn's files, in a worker."""
        port = self._port_for("/undo", idle=True)
        if port is not None:
            self.surface.run_in_thread(lambda: self.sink(UndoDone(port.undo(force=force))))

    def undone(self, result: UndoResult) -> str | None:
        """Say what `/undo` did; the turn's message as the person typed it, for the prompt."""
        for level, text in undo_lines(result, self.start_view.cwd):
            self.surface.say(level, text)
        if result.prompt is None:
            return None
        return self._typed.get(result.prompt, result.prompt)

    def _run_command(self, port: AgentPort, command: str) -> None:
        """In a worker thread: the person's command, then a note that it returned."""
        try:
            ended = port.run_command(command)
        except Exception as error:  # never the window: one line, as for a turn
            log.exception("run_command raised")
            ended = TurnEnded("error", f"{type(error).__name__}: {error}")
        self.sink(TurnWorkerDone(ended))

    def turn_started(self, text: str) -> bool:
        """The core says a turn started; True when its user text still has to be shown."""
        if not self.running:  # a replay, or a turn the window did not start itself
            self.running = True
            self._said.clear()
            self.started_at = self.clock()
            self.surface.keys_changed()
        echo = self._echoed != text
        self._echoed = None
        return echo

    def said(self, text: str) -> None:
        """A notice was shown this turn (the turn's end does not repeat it)."""
        self._said.add(text)

    def usage(self, prompt_tokens: int, completion_tokens: int) -> None:
        self.prompt_tokens = prompt_tokens + completion_tokens
        self.refresh_top_line()

    def turn_ended(self, ended: TurnEnded) -> str | None:
        """The turn is over; returns its error line when it was not said yet."""
        error = ended.error if ended.error and ended.error not in self._said else None
        if self.running and self.queue.held:  # Esc with messages waiting: kept
            self.surface.say("info", QUEUE_KEPT.format(count=messages(len(self.queue))))
        self.running = False
        self._said.clear()
        self.questions.clear()
        self.surface.show_status("", None)
        self.surface.keys_changed()
        self.refresh_top_line()
        return error

    # -- permission questions -------------------------------------------------------------

    def question_opened(self, request: PermissionRequest) -> None:
        self.questions[request.call_id] = request

    def question_resolved(self, call_id: str) -> None:
        """Answered elsewhere (a session grant, an interrupt)."""
        self.questions.pop(call_id, None)
        self.surface.keys_changed()

    def tool_finished(self, call_id: str) -> None:
        self.questions.pop(call_id, None)

    def answer(
        self, key: str, reason: str = "", call_id: str | None = None
    ) -> tuple[str, PermissionAnswer] | None:
        """a / s / r on a question (`OpenQuestions.answer`)."""
        answered = self.questions.answer(key, reason, call_id)
        if answered is not None:
            self.surface.keys_changed()
        return answered

    # -- interrupting and leaving ---------------------------------------------------------

    def interrupt(self) -> None:
        """Esc: interrupt the turn (SPEC §3); the core closes the stream and ends commands.

        Messages waiting are kept, not sent: the person stopped the turn to say
        something else, and may edit or drop them."""
        if self.port is not None and self.running:
            if self.queue.hold():
                self._show_queue()
            self.port.cancel()

    def quit(self) -> None:
        """Ctrl+Q or /quit: interrupt what runs; the caller closes the window."""
        self.interrupt()

    def window_closed(self) -> None:
        """The window closes: the running turn stops (its open questions with it); what is
        queued stays unsent. The core itself closes after (`close`)."""
        if self.port is not None and self.running:
            self.port.cancel()

    def close(self) -> None:
        """The window is gone: stop the core's commands and servers."""
        if self.port is not None:
            self.port.close()

    # -- session commands -----------------------------------------------------------------

    def new_session(self, notice: str) -> None:
        """`/new`: a fresh history; the transcript restarts with `notice`."""
        port = self._port_for("/new", idle=True)
        if port is None:
            return
        port.new_session()
        self.prompt_tokens = 0
        self.surface.restart_transcript(notice, self.refresh_top_line)

    def compact(self) -> None:
        """`/compact`: runs like a turn (Esc interrupts, messages queue), in a worker."""
        port = self._port_for("/compact", idle=True)
        if port is None:
            return
        self.running = True
        self.started_at = self.clock()
        self.surface.show_status(COMPACTING, None)
        self.surface.run_in_thread(lambda: self._compact(port), group="turn")

    def _compact(self, port: AgentPort) -> None:
        try:
            port.compact()
        except NotImplementedError:
            self.sink(Notice("warning", COMPACT_UNAVAILABLE))
        except Exception as error:  # a server fault ends the compaction, not the window
            log.exception("/compact failed")
            self.sink(Notice("error", f"/compact failed: {error}"))
        # On success the core says what it compacted, in its own notice.
        self.sink(TurnWorkerDone(TurnEnded("answered")))
