"""The Agent: one conversation with the model, turn after turn (SPEC §3).

`run_turn` blocks (call it from a worker thread); `cancel` may be called from any thread.
Events go to the sink; permission questions travel as PermissionRequest events carrying a
Future that the sink resolves. The history is kept valid at every exit of a turn: every tool
call of an assistant message gets a result, whatever happened.

This module is the façade (it implements `AgentPort`); each job lives in its own module:
the conversation and its session file (`conversation`), one model call (`model_call`), a
message's tool calls (`tool_calls`), compaction (`compaction`), the context budget
(`context`), and the turn's tally (`turn_tally`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mm_tui.agent.calls.quoting import ASKING_AGAIN, empty_answer
from mm_tui.agent.checkpoints import Checkpoints, UndoResult, undo_note
from mm_tui.agent.compaction import TURN_FILLS_CONTEXT, compact, plan_compaction
from mm_tui.agent.config import Config
from mm_tui.agent.context import ContextBudget, estimate_tokens
from mm_tui.agent.conversation import Conversation
from mm_tui.agent.events import EventSink, Notice, TurnEnded, TurnStarted
from mm_tui.agent.loop_detector import LoopDetector
from mm_tui.agent.messages import Message
from mm_tui.agent.model_call import RETRY_DELAYS, ModelCall, ToolMode
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.output_store import output_file, read_full_output
from mm_tui.agent.permissions import PermissionGate
from mm_tui.agent.port import ConfigRule, PermissionMode, PermissionState, TopLineView
from mm_tui.agent.project_instructions import load_project_instructions
from mm_tui.agent.prompt_reuse import reuse_percent
from mm_tui.agent.prompts import system_prompt
from mm_tui.agent.session import Session, SessionInfo, SessionStore, new_session_id
from mm_tui.agent.shell_commands import ShellCommands
from mm_tui.agent.tool_calls import ToolRunner
from mm_tui.agent.tools.registry import ToolRegistry, build_registry
from mm_tui.agent.turn_signals import TurnSignals
from mm_tui.agent.turn_tally import TurnTally
from mm_tui.support.url_text import shown_url

log = logging.getLogger(__name__)

MAX_TURNS_REACHED = (
    "turn stopped: {n} model calls spent (maxTurns) — say how to go on, or raise maxTurns"
)


class Agent:
    """The conversation: history, tools, permissions, loop detector, session file."""

    def __init__(
        self,
        config: Config,
        sink: EventSink,
        cwd: Path | None = None,
        *,
        store: SessionStore | None = None,
        resume: str | None = None,
        continue_last: bool = False,
        registry: ToolRegistry | None = None,
        request_timeout: float = 300.0,
        retry_delays: tuple[float, ...] = RETRY_DELAYS,
    ) -> None:
        self.config = config
        self.sink = sink
        self.cwd = (cwd or Path.cwd()).resolve()
        self.model: str = config.model or ""
        self.base_url = shown_url(config.base_url)  # shown and stored: no password
        self.client = ModelClient(config.base_url, config.api_key, timeout=request_timeout)
        self.gate = PermissionGate.from_config(config, self.cwd)
        self.detector = LoopDetector()
        self.registry = registry if registry is not None else build_registry(config, self.cwd)
        self.startup_notices: list[Notice] = [Notice("warning", n) for n in self.registry.notices]
        if (instructions := load_project_instructions(self.cwd)) is not None:
            self.startup_notices.append(Notice(instructions.level, instructions.note))
        self.store = store or SessionStore()
        self.signals = TurnSignals(sink)
        self.checkpoints = Checkpoints(lambda: self.session_path.with_suffix(".undo"))
        self.conversation = Conversation(self.store, sink, self._fresh_session)
        self.startup_notices += self.conversation.open(resume, continue_last, self.cwd)
        self.model = self.model or self.session.model
        self.budget = ContextBudget(config.context_window)
        self._turn_fills_said = False  # this turn was said to hold the whole context
        self.model_call = ModelCall(
            config,
            self.client,
            self.registry,
            self.conversation,
            self.signals,
            self.budget,
            retry_delays,
        )
        self.tools = ToolRunner(
            self.registry,
            self.gate,
            self.detector,
            self.conversation,
            self.signals,
            self.cwd,
            config.max_output,
            lambda call_id: output_file(self.session_path, call_id),
            config.max_tool_calls,
            self.checkpoints,
        )
        if self.conversation.resumed:  # the top line shows the resumed context at once
            self.budget.used = self._estimated_context()
        self.shell = ShellCommands(self.registry, self.tools, self.signals)
        if config.system_prompt_file and not config.system_prompt:
            path = Path(config.system_prompt_file).expanduser()
            if not (path if path.is_absolute() else self.cwd / path).is_file():
                self.startup_notices.append(
                    Notice(
                        "warning", f"systemPromptFile {path} not found — using the built-in prompt"
                    )
                )

    # -- the window's view of the state ---------------------------------------------------

    @property
    def session(self) -> Session:
        return self.conversation.session

    @property
    def messages(self) -> list[Message]:
        return self.conversation.messages

    @property
    def history(self) -> list[Message]:
        """Every message of the session, those compaction summarised included (replay,
        export, the window after --continue)."""
        return self.conversation.history

    @property
    def session_path(self) -> Path:
        return self.conversation.path

    def resumed_history(self) -> dict[str, Any] | None:
        """The resumed session whole (its history: compacted messages included), for the
        window to show; None for a new session."""
        if not self.conversation.resumed:
            return None
        document = self.session.to_json()
        document["messages"] = list(document["messages"])  # a turn may append meanwhile
        return document

    def _estimated_context(self) -> int:
        """The context the next request would carry, estimated (no call made yet)."""
        return estimate_tokens(self.model_call.request(self.model))

    def full_output(self, call_id: str) -> str | None:
        """A call's whole output as it ran (the model got it cut), or None if none was kept."""
        return read_full_output(self.session_path, call_id)

    @property
    def tool_mode(self) -> ToolMode:
        return self.model_call.tool_mode

    @property
    def context_tokens(self) -> int:
        return self.budget.used

    @property
    def context_window(self) -> int:
        return self.budget.window

    @property
    def grants(self) -> frozenset[str]:
        return self.gate.snapshot()[2]

    @property
    def yolo(self) -> bool:
        return self.gate.snapshot()[1]

    @property
    def permissions(self) -> str:
        return self.gate.snapshot()[0]

    def set_permissions(self, mode: PermissionMode) -> None:
        self.gate.set_permissions(mode)

    def set_yolo(self, on: bool) -> None:
        self.gate.set_yolo(on)

    def revoke_grants(self, names: Iterable[str] | None = None) -> list[str]:
        return self.gate.revoke(names)

    def permission_state(self) -> PermissionState:
        mode, yolo, grants = self.gate.snapshot()
        origin = str(self.config.rules_source or "the config")
        rules = tuple(ConfigRule(e, text, origin) for e, text in self.gate.rules.texts())
        return PermissionState(mode, yolo, grants, rules)

    def top_line(self) -> TopLineView:
        return TopLineView(
            model=self.model,
            server=self.base_url,
            cwd=self.cwd,
            used=self.budget.used,
            window=self.budget.window,
            mode="yolo" if self.yolo else "",
            prompt=self.model_call.fit.tokens,
            cache=reuse_percent(self.model_call.reuse),
        )

    def list_models(self) -> list[str]:
        """The server's models (GET /models); raises ModelFault with one line."""
        return self.client.list_models()

    def set_model(self, name: str) -> None:
        self.model = name
        self.conversation.set_model(name)

    # -- lifecycle ------------------------------------------------------------------------

    def _fresh_session(self) -> Session:
        return Session(
            id=new_session_id(),
            model=self.model,
            base_url=self.base_url,
            cwd=str(self.cwd),
            messages=[{"role": "system", "content": system_prompt(self.config, self.cwd)}],
        )

    def new_session(self) -> None:
        """`/new`: a fresh history and a reset loop detector (SPEC §5)."""
        self.conversation.start_new()
        self.shell.forget()
        self.detector.reset()
        self.budget.reset()

    def session_id(self) -> str:
        return self.session.id

    def list_sessions(self, *, everywhere: bool = False) -> list[SessionInfo]:
        """Sessions of this directory (of every directory with `everywhere`), most recent
        first: id, directory, started, first message, messages, size."""
        return self.store.list_sessions(None if everywhere else self.cwd)

    def open_session(self, session: str) -> list[Notice]:
        """Go on in another session (a copy when another process writes it); the loop
        detector and the context count start afresh. Returns the lines to say."""
        notices = self.conversation.switch(session)
        self._after_switch()
        return notices

    def fork_session(self, session: str) -> list[Notice]:
        """Go on in a copy of a session, the original left as it is."""
        notices = self.conversation.switch(session, fork=True)
        self._after_switch()
        return notices

    def _after_switch(self) -> None:
        self.detector.reset()
        self.budget.used = self._estimated_context()

    def cancel(self) -> None:
        """Interrupt the running turn (thread-safe): close the stream, end a running tool."""
        self.signals.cancel.set()

    def close(self) -> None:
        """Stop language servers and anything still running; release the session file."""
        self.signals.cancel.set()
        self.registry.close()
        self.conversation.close()

    # -- one turn ---------------------------------------------------------------------------

    def run_turn(self, text: str) -> TurnEnded:
        """Run one user turn to its end; blocking. Never raises for a fault: it ends the turn."""
        self.signals.begin()
        self._turn_fills_said = False
        tally = TurnTally()
        self.sink(TurnStarted(text))
        content = self.shell.attach_to(text)  # the outputs of `!command`s since the last one
        self.conversation.append({"role": "user", "content": content})
        self.checkpoints.begin_turn(text)
        try:
            ended = self._turn_body(tally)
        except Interrupted:
            ended = TurnEnded("interrupted")
        except ModelFault as fault:
            ended = self.conversation.end_with_error("model", fault.message)
        except Exception as exc:  # a bug must not take the window down: say it, keep going
            log.exception("the turn failed with an internal error")
            message = f"internal error: {type(exc).__name__}: {exc}"
            ended = self.conversation.end_with_error("internal", message)
        finally:
            self.checkpoints.end_turn()
        if ended.reason == "interrupted":
            self.sink(Notice("warning", "interrupted by the user"))
        self.signals.set_spinner("")
        summary = tally.summary()
        self.conversation.add_totals(summary)
        self.sink(summary)
        self.sink(ended)
        return ended

    def run_command(self, command: str) -> TurnEnded:
        """`!command`: the person's shell command through bash and the gate (blocking); its
        output goes along with the next message (`shell_commands`)."""
        self.signals.begin()
        try:
            return self.shell.run(command)
        finally:
            self.signals.set_spinner("")

    def undo(self, *, force: bool = False) -> UndoResult:
        """`/undo`: put back the files of the last turn that changed some (`checkpoints`);
        the model learns it with the next message. Call it while no turn runs."""
        result = self.checkpoints.undo(force=force)
        if result.prompt is not None:
            self.shell.note(undo_note(result, self.cwd))
        return result

    def _turn_body(self, tally: TurnTally) -> TurnEnded:
        if not self.model:
            self.set_model(self._discover_model())
        note = self.budget.ensure_known(self.config.base_url, self.model)
        if note:
            self.sink(Notice("warning", note))
        asked_again = False
        if not self.budget.pending:  # else fitted next turn, to the window then confirmed
            for line in self.model_call.fit_prompt(self.model, self.budget.window):
                self.sink(Notice("info", line))
            crowded, self.model_call.fit.crowded = self.model_call.fit.crowded, ""
            if crowded:  # once: the fit runs on the first turn only
                self.sink(Notice("warning", crowded))
        for _ in range(self.config.max_turns):
            self._auto_compact()
            reply = self.model_call.run(self.model, tally)
            if isinstance(reply, TurnEnded):
                return reply
            empty = "" if reply.calls else empty_answer(reply.text, reply.reasoning)
            if empty and not asked_again:  # an empty or thinking-only reply: once more
                asked_again = True
                self.sink(Notice("warning", ASKING_AGAIN.format(empty)))
                continue
            if empty:
                self.sink(Notice("warning", empty))
            if not reply.calls:
                return TurnEnded("answered")
            asked_again = False
            stopped = self.tools.run(reply.calls, tally)
            if stopped is not None:
                return stopped
        message = MAX_TURNS_REACHED.format(n=self.config.max_turns)
        self.sink(Notice("warning", message))
        return TurnEnded("max_turns", message)

    def _discover_model(self) -> str:
        models = self.client.list_models()
        if not models:
            raise ModelFault(
                f"the model server at {self.base_url} lists no model — set one with --model, "
                "MM_MODEL or model in .mm.yaml"
            )
        self.sink(Notice("info", f"using model {models[0]} (the first the server lists)"))
        return models[0]

    # -- compaction -------------------------------------------------------------------------

    def _auto_compact(self) -> None:
        """Past `autoCompact`: the conversation's middle summarised; when this turn holds it
        all (nothing older to compact), said once a turn instead of at each call."""
        if not self.budget.over(self.config.auto_compact):
            return
        used = f"{self.budget.used} of {self.budget.window} tokens used"
        if plan_compaction(self.conversation.messages) is not None:
            self.sink(Notice("info", f"{used} — compacting"))
            self._compact()
        elif not self._turn_fills_said:
            self._turn_fills_said = True
            self.sink(Notice("warning", used + TURN_FILLS_CONTEXT))

    def compact(self) -> None:
        """`/compact`: summarise the middle of the conversation (blocking). The loop detector
        is not reset (SPEC §5)."""
        self.signals.begin()
        try:
            if not self.model:
                self.set_model(self._discover_model())
            self._compact()
        except ModelFault as fault:
            log.debug("compaction could not start", exc_info=True)
            self.sink(Notice("error", fault.message))
        finally:
            self.signals.set_spinner("")

    def _compact(self) -> None:
        if compact(self.conversation, self.client, self.signals, self.model):
            self.budget.used = estimate_tokens(self.model_call.request(self.model))
