"""The Agent: one conversation with the model, turn after turn (SPEC §3).

`run_turn` blocks (call it from a worker thread); `cancel` may be called from any thread.
Events go to the sink; permission questions travel as PermissionRequest events carrying a
Future that the sink resolves. The history is kept valid at every exit of a turn: every tool
call of an assistant message gets a result, whatever happened.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mm_tui.agent.compaction import plan_compaction, summary_request
from mm_tui.agent.config import Config
from mm_tui.agent.context import (
    DEFAULT_CONTEXT_WINDOW,
    discover_context_window,
    estimate_tokens,
    truncation_warning,
)
from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WAITING_FOR_ANSWER,
    WAITING_FOR_MODEL,
    WRITING,
    AssistantMessageDone,
    EventSink,
    Notice,
    PermissionAnswer,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    Usage,
    running_state,
)
from mm_tui.agent.loop_detector import (
    LOOP_NOTE,
    LOOP_STOP,
    LoopDetector,
    LoopVerdict,
    runaway_error,
)
from mm_tui.agent.model_client import Interrupted, ModelClient, ModelFault
from mm_tui.agent.permissions import PermissionGate
from mm_tui.agent.port import PermissionMode, PermissionState, TopLineView
from mm_tui.agent.project_instructions import load_project_instructions
from mm_tui.agent.prompts import system_prompt
from mm_tui.agent.repair import BADGE_NAME, parse_arguments
from mm_tui.agent.session import (
    Session,
    SessionError,
    SessionStore,
    answer_unfinished_calls,
    new_session_id,
)
from mm_tui.agent.stream import AssembledCall, StreamAssembler, made_up_id
from mm_tui.agent.text_calls import describe_tools_for_prompt, extract_text_calls, to_text_protocol
from mm_tui.agent.tools.base import INTERRUPTED, ToolContext, ToolKind
from mm_tui.agent.tools.registry import ToolRegistry, build_registry

NOT_RUN_AFTER_LOOP = "[not run: the turn was stopped by the loop detector]"
CUT_STREAM = "the model's answer was cut off: the stream ended without a finish reason"
MAX_TURNS_REACHED = (
    "turn stopped: {n} model calls spent (maxTurns) — say how to go on, or raise maxTurns"
)
TOOLS_UNSUPPORTED = re.compile(r"does not support tools|tools? (?:is|are) not supported", re.I)
RETRY_DELAYS = (1.0, 2.0, 4.0)  # 429 and 5xx: three retries at most (SPEC §3)

#: Message keys the model is sent; anything else (reasoning kept for replay) stays local.
_SENT_KEYS = {"role", "content", "tool_calls", "tool_call_id", "name"}


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
        self.base_url = config.base_url
        self.client = ModelClient(config.base_url, config.api_key, timeout=request_timeout)
        self.retry_delays = retry_delays
        self.gate = PermissionGate(config.permissions, config.yolo)
        self.detector = LoopDetector()
        self.registry = registry if registry is not None else build_registry(config, self.cwd)
        self.startup_notices: list[Notice] = [Notice("warning", n) for n in self.registry.notices]
        if (instructions := load_project_instructions(self.cwd)) is not None:
            self.startup_notices.append(Notice(instructions.level, instructions.note))
        self.store = store or SessionStore()
        self.session = self._open_session(resume, continue_last)
        self.context_window = config.context_window or DEFAULT_CONTEXT_WINDOW
        self._context_known = config.context_window is not None
        self.context_tokens = 0
        #: "native" (the API's tools) or "text" (described in the prompt); see issue 6.
        self.tool_mode = "text" if config.tool_calls == "text" else "native"
        self._cancel = threading.Event()
        self._spinner = ""
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
    def messages(self) -> list[dict[str, Any]]:
        return self.session.messages

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
        return PermissionState(mode, yolo, grants)

    def top_line(self) -> TopLineView:
        return TopLineView(
            model=self.model,
            server=self.base_url,
            cwd=self.cwd,
            used=self.context_tokens,
            window=self.context_window,
            mode="yolo" if self.yolo else "",
        )

    @property
    def session_path(self) -> Path:
        return self.store.path_for(self.session.id)

    def list_models(self) -> list[str]:
        """The server's models (GET /models); raises ModelFault with one line."""
        return self.client.list_models()

    def set_model(self, name: str) -> None:
        self.model = name
        self.session.model = name
        self._save()

    # -- lifecycle ------------------------------------------------------------------------

    def _open_session(self, resume: str | None, continue_last: bool) -> Session:
        try:
            if resume:
                session = self.store.load(resume)
            elif continue_last:
                session = self.store.latest_for(self.cwd)
                if session is None:
                    self.startup_notices.append(
                        Notice("info", f"no earlier session in {self.cwd} — starting a new one")
                    )
            else:
                session = None
        except SessionError as exc:
            self.startup_notices.append(
                Notice("error", f"{exc} — the file is kept as it is; starting a new session")
            )
            session = None
        if session is not None:
            self.model = self.model or session.model
            if answer_unfinished_calls(session.messages):
                self.startup_notices.append(
                    Notice("warning", "the last session stopped in the middle of a tool call")
                )
            self.startup_notices.append(
                Notice("info", f"resumed session {session.id} ({len(session.messages)} messages)")
            )
            return session
        return self._fresh_session()

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
        self.session = self._fresh_session()
        self.detector.reset()
        self.context_tokens = 0

    def cancel(self) -> None:
        """Interrupt the running turn (thread-safe): close the stream, end a running tool."""
        self._cancel.set()

    def close(self) -> None:
        """Stop language servers and anything still running."""
        self._cancel.set()
        self.registry.close()

    # -- one turn ---------------------------------------------------------------------------

    def run_turn(self, text: str) -> TurnEnded:
        """Run one user turn to its end; blocking. Never raises for a fault: it ends the turn."""
        self._cancel = threading.Event()
        turn = _TurnTally(started=time.monotonic())
        self.sink(TurnStarted(text))
        self._append({"role": "user", "content": text})
        try:
            ended = self._turn_body(turn)
        except Interrupted:
            ended = TurnEnded("interrupted")
        except ModelFault as fault:
            ended = self._end_with_error("model", fault.message)
        except Exception as exc:  # a bug must not take the window down: say it, keep going
            ended = self._end_with_error("internal", f"internal error: {type(exc).__name__}: {exc}")
        if ended.reason == "interrupted":
            self.sink(Notice("warning", "interrupted by the user"))
        self._set_spinner("")
        summary = turn.summary()
        self._add_to_session_totals(summary)
        self.sink(summary)
        self.sink(ended)
        return ended

    def _turn_body(self, turn: _TurnTally) -> TurnEnded:
        if not self.model:
            self.set_model(self._discover_model())
        self._ensure_context_window()
        for _ in range(self.config.max_turns):
            self._auto_compact()
            reply = self._model_call(turn)
            if reply is None:
                return TurnEnded("interrupted")
            if isinstance(reply, TurnEnded):
                return reply
            if not reply.calls:
                return TurnEnded("answered")
            stopped = self._run_calls(reply.calls, turn)
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

    def _end_with_error(self, where: str, message: str) -> TurnEnded:
        self.session.add_error(where, message)
        self._save()
        self.sink(Notice("error", message))
        return TurnEnded("error", message)

    # -- a model call -----------------------------------------------------------------------

    def _request(self) -> dict[str, Any]:
        messages = [{k: v for k, v in m.items() if k in _SENT_KEYS} for m in self.messages]
        tools = self.registry.schemas()
        if self.tool_mode == "text":
            messages = to_text_protocol(messages, describe_tools_for_prompt(tools))
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if tools and self.tool_mode == "native":
            request["tools"] = tools
        if self.config.temperature is not None:
            request["temperature"] = self.config.temperature
        request["stream_options"] = {"include_usage": True}
        return request

    def _model_call(self, turn: _TurnTally) -> StreamAssembler | TurnEnded | None:
        """Stream one completion, retrying 429/5xx; record the assistant message."""
        for attempt in range(len(self.retry_delays) + 1):
            try:
                return self._stream_once(turn)
            except ModelFault as fault:
                if self._switch_to_text_mode(fault):
                    return self._stream_once(turn)
                if not fault.retryable or attempt == len(self.retry_delays):
                    if fault.retryable:
                        raise ModelFault(
                            f"{fault.message} — gave up after {attempt} retries"
                        ) from None
                    raise
                delay = self.retry_delays[attempt]
                self.sink(Notice("warning", f"{fault.message} — retrying in {delay:g}s"))
                if self._cancel.wait(delay):
                    raise Interrupted() from None
        raise AssertionError("unreachable")

    def _stream_once(self, turn: _TurnTally) -> StreamAssembler | TurnEnded:
        self._set_spinner(WAITING_FOR_MODEL)
        assembler = StreamAssembler()
        runaway: str | None = None
        request = self._request()
        try:
            for chunk in self.client.stream(request, self._cancel):
                delta = assembler.feed(chunk)
                if delta.reasoning:
                    self._set_spinner(THINKING)
                    self.sink(ReasoningDelta(delta.reasoning))
                if delta.text:
                    self._set_spinner(WRITING)
                    self.sink(TextDelta(delta.text))
                if delta.tool_call is not None:
                    self._set_spinner(COMPOSING_TOOL_CALL)
                    call = delta.tool_call
                    runaway = runaway_error(call)
                    if runaway:
                        break
        except Interrupted:
            self._record_partial(assembler)
            raise
        if assembler.usage:
            turn.add_usage(*assembler.usage)
            self.context_tokens = sum(assembler.usage)
            self.sink(Usage(*assembler.usage))
            warning = truncation_warning(
                estimate_tokens(request), assembler.usage[0], self.context_window
            )
            if warning and not turn.warned_truncation:
                turn.warned_truncation = True
                self.sink(Notice("warning", warning))
        else:
            self.context_tokens = estimate_tokens(request) + len(assembler.text) // 4
        if runaway:
            self._record_partial(assembler)
            return self._end_with_error("generation", runaway)
        if assembler.was_cut:
            self._record_partial(assembler)
            return self._end_with_error("model", CUT_STREAM)
        content = assembler.text
        if not assembler.calls and assembler.text:
            found = extract_text_calls(
                assembler.text, lambda name: self.registry.resolve(name) is not None
            )
            for call in found.calls:
                arguments = call.arguments
                if not isinstance(arguments, str):
                    arguments = json.dumps(arguments, ensure_ascii=False)
                assembler.calls.append(
                    AssembledCall(
                        made_up_id(), call.name, arguments, badge=call.badge, raw=call.raw
                    )
                )
            if found.calls:
                content = found.remaining
        message: dict[str, Any] = {"role": "assistant", "content": content or None}
        if assembler.calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments or "{}"},
                }
                for c in assembler.calls
            ]
        elif not assembler.text:
            message["content"] = ""
            self.sink(Notice("warning", "the model returned an empty answer"))
        if assembler.reasoning:
            message["reasoning_content"] = assembler.reasoning
        self._append(message)
        self.sink(AssistantMessageDone(assembler.text, assembler.reasoning))
        return assembler

    def _record_partial(self, assembler: StreamAssembler) -> None:
        """Keep what was said before a cut or an interrupt; drop half-written tool calls."""
        if assembler.text or assembler.reasoning:
            message: dict[str, Any] = {"role": "assistant", "content": assembler.text}
            if assembler.reasoning:
                message["reasoning_content"] = assembler.reasoning
            self._append(message)
            self.sink(AssistantMessageDone(assembler.text, assembler.reasoning))

    # -- tool calls -------------------------------------------------------------------------

    def _run_calls(self, calls: list[AssembledCall], turn: _TurnTally) -> TurnEnded | None:
        for position, call in enumerate(calls):
            if self._cancel.is_set():
                self._fill_results(calls[position:], INTERRUPTED, ToolStatus.INTERRUPTED)
                return TurnEnded("interrupted")
            verdict, status = self._run_call(call, turn)
            if status is ToolStatus.INTERRUPTED or self._cancel.is_set():
                self._fill_results(calls[position + 1 :], INTERRUPTED, ToolStatus.INTERRUPTED)
                return TurnEnded("interrupted")
            if verdict is LoopVerdict.STOP:
                self._fill_results(calls[position + 1 :], NOT_RUN_AFTER_LOOP, ToolStatus.FAILED)
                message = LOOP_STOP.format(tool=call.name, count=self.detector.count)
                self.session.add_error("generation", message)
                self._save()
                self.sink(Notice("loop", message))
                return TurnEnded("loop", message)
        return None

    def _fill_results(self, calls: list[AssembledCall], text: str, status: ToolStatus) -> None:
        for call in calls:
            title = f"{call.name}".strip() or "tool"
            self.sink(ToolStarted(call.id, call.name, {}, title))
            self._finish(call, title, status, 0.0, text, None)

    def _run_call(self, call: AssembledCall, turn: _TurnTally) -> tuple[LoopVerdict, ToolStatus]:
        tool = self.registry.resolve(call.name)
        parsed = parse_arguments(call.arguments)
        badges = [b for b in (call.badge, parsed.badge) if b]
        if tool is not None and tool.name != call.name:
            badges.insert(0, BADGE_NAME)
        badge = ", ".join(badges)
        args = parsed.arguments if parsed.arguments is not None else {}
        title = tool.title(args) if tool is not None and parsed.arguments is not None else call.name
        raw = call.raw or (call.arguments if badge else "")
        self.sink(ToolStarted(call.id, call.name, args, title, badge, raw))
        started = time.monotonic()
        diff: str | None = None
        if tool is None:
            output, status = self._unknown_tool(call.name), ToolStatus.FAILED
        elif parsed.arguments is None:
            output = (
                f"[error: the arguments of {tool.name} are not valid JSON ({parsed.error}) — "
                "call it again with one JSON object holding the fields of its schema]"
            )
            status = ToolStatus.FAILED
        else:
            turn.count(tool.kind)
            output, status, diff = self._execute(call.id, tool, args)
        recorded = parsed.arguments if parsed.arguments is not None else call.arguments
        verdict = self.detector.record(call.name, recorded, output)
        if verdict is LoopVerdict.WARN:
            output = f"{output}\n{LOOP_NOTE}"
            self.sink(Notice("loop", f"{call.name}: the same call and result 3 times in a row"))
        elif verdict is LoopVerdict.STOP:
            output = LOOP_STOP.format(tool=call.name, count=self.detector.count)
            status = ToolStatus.LOOP_DETECTED
        self._finish(call, title, status, time.monotonic() - started, output, diff, badge, raw)
        return verdict, status

    def _unknown_tool(self, name: str) -> str:
        closest = self.registry.closest(name) if name else None
        hint = f' Did you mean "{closest}"?' if closest else ""
        available = ", ".join(self.registry.names()) or "none"
        return f'[error: there is no tool named "{name}".{hint} Available tools: {available}]'

    def _execute(
        self, call_id: str, tool: Any, args: dict[str, Any]
    ) -> tuple[str, ToolStatus, str | None]:
        ctx = ToolContext(
            cwd=self.cwd,
            max_output=self.config.max_output,
            cancel=self._cancel,
            emit_output=lambda text: self.sink(ToolOutputDelta(call_id, text)),
        )
        try:
            if self.gate.asks and tool.needs_permission(args, ctx):
                self._set_spinner(WAITING_FOR_ANSWER)
                answer = self.gate.decide(
                    call_id, tool.name, tool.preview(args, ctx), self.sink, self._cancel
                )
                if answer is None:
                    return INTERRUPTED, ToolStatus.INTERRUPTED, None
                if answer is PermissionAnswer.REJECT:
                    return tool.rejection_text, ToolStatus.REJECTED, None
            self._set_spinner(running_state(tool.name))
            result = tool.run(args, ctx)
        except Exception as exc:  # SPEC §1: an exception escaping a tool is a bug; say it
            message = f"[error: {tool.name} failed unexpectedly: {type(exc).__name__}: {exc}]"
            self.session.add_error("tool", message)
            return message, ToolStatus.FAILED, None
        return result.output, result.status, result.diff

    def _finish(
        self,
        call: AssembledCall,
        title: str,
        status: ToolStatus,
        duration: float,
        output: str,
        diff: str | None,
        badge: str = "",
        raw: str = "",
    ) -> None:
        self.session.tool_meta[call.id] = {
            "title": title,
            "status": status.value,
            "duration": round(duration, 3),
            "diff": diff,
        }
        if badge:  # how a weak model's call was recovered, for the row and for replays
            self.session.tool_meta[call.id] |= {"badge": badge, "raw": raw}
        self._append({"role": "tool", "tool_call_id": call.id, "content": output})
        self.sink(ToolFinished(call.id, call.name, title, status, duration, output, diff))

    # -- small models: text tool calls, context budget, compaction (issue 6) ---------------

    def _switch_to_text_mode(self, fault: ModelFault) -> bool:
        """In `toolCalls: auto`, a server that says the model has no tools → text protocol."""
        if self.config.tool_calls != "auto" or self.tool_mode != "native":
            return False
        if fault.status != 400 or not TOOLS_UNSUPPORTED.search(f"{fault.message} {fault.body}"):
            return False
        self.tool_mode = "text"
        self.sink(
            Notice(
                "warning",
                f"the server says {self.model} does not support native tool calls — this "
                "session now describes the tools in the prompt and reads calls from the text",
            )
        )
        return True

    def _ensure_context_window(self) -> None:
        if self._context_known:
            return
        self._context_known = True
        window = discover_context_window(self.base_url, self.model)
        self.context_window = window.tokens
        if window.note:
            self.sink(Notice("warning", window.note))

    def _auto_compact(self) -> None:
        threshold = self.config.auto_compact
        if threshold and self.context_tokens >= threshold * self.context_window:
            self.sink(
                Notice(
                    "info",
                    f"{self.context_tokens} of {self.context_window} tokens used — compacting",
                )
            )
            self._compact()

    def compact(self) -> None:
        """`/compact`: summarise the middle of the conversation (blocking). The loop detector
        is not reset (SPEC §5)."""
        self._cancel = threading.Event()
        try:
            if not self.model:
                self.set_model(self._discover_model())
            self._compact()
        except ModelFault as fault:
            self.sink(Notice("error", fault.message))
        finally:
            self._set_spinner("")

    def _compact(self) -> None:
        plan = plan_compaction(self.messages)
        if plan is None:
            self.sink(Notice("info", "nothing to compact yet: the conversation is short"))
            return
        before = len(self.messages)
        self._set_spinner(WAITING_FOR_MODEL)
        summary = StreamAssembler()
        try:
            for chunk in self.client.stream(summary_request(self.model, plan.middle), self._cancel):
                summary.feed(chunk)
            text = summary.text.strip()
            failure = "" if text else "the model returned an empty summary"
        except ModelFault as fault:
            text, failure = "", fault.message
        except Interrupted:
            text, failure = "", "interrupted"
        if text:
            self.session.messages = plan.with_summary(text)
            self.sink(
                Notice(
                    "info",
                    f"compacted {len(plan.middle)} message(s) into a summary "
                    f"({before} → {len(self.messages)} messages)",
                )
            )
        else:
            self.session.messages = plan.with_middle_dropped()
            message = (
                f"compaction failed ({failure}) — dropped the {len(plan.middle)} oldest "
                "message(s) instead"
            )
            self.session.add_error("compact", message)
            self.sink(Notice("warning", message))
        self.context_tokens = estimate_tokens(self._request())
        self._save()

    # -- bookkeeping ------------------------------------------------------------------------

    def _add_to_session_totals(self, summary: TurnSummary) -> None:
        counters = self.session.counters
        for key in ("commands", "file_ops", "skills", "lsp_calls"):
            counters[key] = counters.get(key, 0) + getattr(summary, key)
        counters["turns"] = counters.get("turns", 0) + 1
        usage = self.session.usage
        usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + summary.prompt_tokens
        usage["completion_tokens"] = usage.get("completion_tokens", 0) + summary.completion_tokens
        self._save()

    def _set_spinner(self, state: str) -> None:
        if state != self._spinner:
            self._spinner = state
            self.sink(SpinnerChanged(state))

    def _append(self, message: dict[str, Any]) -> None:
        self.session.messages.append(message)
        self._save()

    def _save(self) -> None:
        try:
            self.store.save(self.session)
        except OSError as exc:
            self.sink(Notice("error", f"could not save the session ({exc.strerror or exc})"))


class _TurnTally:
    """Counters, tokens and time of one turn, for the summary line (SPEC §7)."""

    def __init__(self, started: float) -> None:
        self.started = started
        self.kinds: Counter[ToolKind] = Counter()
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.warned_truncation = False  # the budget warning is said once a turn

    def count(self, kind: ToolKind) -> None:
        self.kinds[kind] += 1

    def add_usage(self, prompt: int, completion: int) -> None:
        self.prompt_tokens += prompt
        self.completion_tokens += completion

    def summary(self) -> TurnSummary:
        return TurnSummary(
            commands=self.kinds[ToolKind.COMMAND],
            file_ops=self.kinds[ToolKind.FILE],
            skills=self.kinds[ToolKind.SKILL],
            lsp_calls=self.kinds[ToolKind.LSP],
            duration=time.monotonic() - self.started,
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )
