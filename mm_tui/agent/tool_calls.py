"""Running the tool calls of one assistant message (SPEC §3, §5): repair of the call, the
permission gate, the tool itself, the loop detector, and a result for every call whatever
happens — so the history stays valid for the next request.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mm_tui.agent.checkpoints import Checkpoints
from mm_tui.agent.conversation import Conversation
from mm_tui.agent.events import (
    WAITING_FOR_ANSWER,
    Notice,
    ToolFinished,
    ToolOutputDelta,
    ToolRunning,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    running_state,
)
from mm_tui.agent.loop_detector import LoopDetector, LoopVerdict
from mm_tui.agent.output_store import FullOutputWriter
from mm_tui.agent.permissions import PermissionGate
from mm_tui.agent.repair import BADGE_NAME, parse_arguments
from mm_tui.agent.stream import AssembledCall
from mm_tui.agent.tool_record import ToolRecord
from mm_tui.agent.tools.base import INTERRUPTED, Tool, ToolContext, ToolKind
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.agent.turn_signals import TurnSignals
from mm_tui.agent.turn_tally import TurnTally
from mm_tui.support.terminal_text import quoted, visible

log = logging.getLogger(__name__)

NOT_RUN_AFTER_LOOP = "[not run: the turn was stopped by the loop detector]"
TOO_MANY_CALLS = (
    "[not run: more than {limit} tool calls in one message; make fewer calls at a time]"
)


class ToolRunner:
    """Runs a message's calls in order; stops at an interrupt or a loop verdict."""

    def __init__(
        self,
        registry: ToolRegistry,
        gate: PermissionGate,
        detector: LoopDetector,
        conversation: Conversation,
        signals: TurnSignals,
        cwd: Path,
        max_output: int,
        full_output_file: Callable[[str], Path] | None = None,
        max_calls: int = 32,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.registry = registry
        self.gate = gate
        self.detector = detector
        self.conversation = conversation
        self.signals = signals
        self.cwd = cwd
        self.max_output = max_output
        #: Where a call's whole live output is kept for the person's viewer (Ctrl+O).
        self.full_output_file = full_output_file
        self.loop_message = ""  # the stop line of the last loop verdict
        self._waited = 0.0  # seconds the current call waited for the person's answer
        self._unanswered = False  # the current call's question was interrupted
        self.max_calls = max_calls
        #: Files are kept before a tool writes them, for `/undo`.
        self.checkpoints = checkpoints

    def run(self, calls: list[AssembledCall], tally: TurnTally) -> TurnEnded | None:
        """Run every call; a TurnEnded when the turn must stop, else None."""
        cancel = self.signals.cancel
        for position, call in enumerate(calls):
            if position == self.max_calls:  # a flood of calls: the rest answered, history valid
                over = TOO_MANY_CALLS.format(limit=self.max_calls)
                self._fill_results(calls[position:], over, ToolStatus.FAILED)
                return None
            if cancel.is_set():
                self._fill_results(calls[position:], INTERRUPTED, ToolStatus.INTERRUPTED)
                return TurnEnded("interrupted")
            verdict, status = self._run_call(call, tally)
            if status is ToolStatus.INTERRUPTED or cancel.is_set():
                self._fill_results(calls[position + 1 :], INTERRUPTED, ToolStatus.INTERRUPTED)
                return TurnEnded("interrupted")
            if verdict is LoopVerdict.STOP:
                self._fill_results(calls[position + 1 :], NOT_RUN_AFTER_LOOP, ToolStatus.FAILED)
                message = self.loop_message
                self.conversation.add_error("generation", message)
                self.signals.sink(Notice("loop", message))
                return TurnEnded("loop", message)
        return None

    def _fill_results(self, calls: list[AssembledCall], text: str, status: ToolStatus) -> None:
        for call in calls:
            title = quoted(call.name.strip()) or "tool"
            self.signals.sink(ToolStarted(call.id, call.name, {}, title))
            self._finish(call, ToolRecord(title, status, 0.0), text)

    def _run_call(self, call: AssembledCall, tally: TurnTally) -> tuple[LoopVerdict, ToolStatus]:
        tool = self.registry.resolve(call.name)
        parsed = parse_arguments(call.arguments, tool.parameters if tool is not None else None)
        badges = [b for b in (call.badge, parsed.badge) if b]
        if tool is not None and tool.name != call.name:
            badges.insert(0, BADGE_NAME)
        badge = ", ".join(badges)
        args = parsed.arguments if parsed.arguments is not None else {}
        title = (  # a row title hides nothing (the whole command, escaped)
            visible(tool.title(args), keep_newlines=False)
            if tool is not None and parsed.arguments is not None
            else quoted(call.name)  # a name the model made up: bounded too
        )
        raw = call.raw or (call.arguments if badge else "")
        self.signals.sink(ToolStarted(call.id, call.name, args, title, badge, raw))
        started = time.monotonic()
        self._waited, self._unanswered = 0.0, False
        diff: str | None = None
        kind: ToolKind | None = None
        if call.not_run:
            output, status = call.not_run, ToolStatus.FAILED
        elif tool is None:
            output, status = self._unknown_tool(call.name), ToolStatus.FAILED
        elif parsed.arguments is None:
            output = (
                f"[error: the arguments of {tool.name} are not valid JSON ({parsed.error}) — "
                "call it again with one JSON object holding the fields of its schema]"
            )
            status = ToolStatus.FAILED
        else:
            kind = tool.kind
            output, status, diff = self._execute(call.id, tool, args)
            if not self._unanswered:  # a question interrupted before its answer ran nothing
                tally.count(kind)
        recorded = parsed.arguments if parsed.arguments is not None else call.arguments
        failed = status is not ToolStatus.DONE  # a repeated success is no failing result
        verdict = self.detector.record(call.name, recorded, output, failed)
        if verdict is LoopVerdict.WARN:
            output = f"{output}\n{self.detector.note()}"
            self.signals.sink(Notice("loop", self.detector.notice(call.name)))
        elif verdict is LoopVerdict.STOP:
            output = self.detector.stop_message(call.name)
            self.loop_message = output
            status = ToolStatus.LOOP_DETECTED
        duration = time.monotonic() - started - self._waited  # not the person's thinking
        record = ToolRecord(title, status, duration, diff, badge, raw if badge else "", kind)
        self._finish(call, record, output)
        return verdict, status

    def run_for_person(self, call_id: str, tool: Tool, command: str) -> tuple[ToolStatus, str]:
        """`!command`: the person's command through the gate and the tool, shown
        as a row; not in the history, not counted by the loop detector or the turn's tally."""
        args = {"command": command}
        title = visible(tool.title(args), keep_newlines=False)
        self.signals.sink(ToolStarted(call_id, tool.name, args, title))
        started = time.monotonic()
        self._waited, self._unanswered = 0.0, False
        output, status, diff = self._execute(call_id, tool, args)
        duration = time.monotonic() - started - self._waited
        self.signals.sink(ToolFinished(call_id, tool.name, title, status, duration, output, diff))
        return status, output

    def _unknown_tool(self, name: str) -> str:
        closest = self.registry.closest(name) if name else None
        hint = f' Did you mean "{closest}"?' if closest else ""
        available = ", ".join(self.registry.names()) or "none"
        shown = quoted(name)
        return f'[error: there is no tool named "{shown}".{hint} Available tools: {available}]'

    def _execute(
        self, call_id: str, tool: Tool, args: dict[str, Any]
    ) -> tuple[str, ToolStatus, str | None]:
        signals = self.signals
        kept: list[FullOutputWriter] = []

        def keep_output(text: str) -> None:
            if not kept and self.full_output_file is not None:
                kept.append(FullOutputWriter(self.full_output_file(call_id)))
            for writer in kept:
                writer.append(text)

        ctx = ToolContext(
            cwd=self.cwd,
            max_output=self.max_output,
            cancel=signals.cancel,
            emit_output=lambda text: signals.sink(ToolOutputDelta(call_id, text)),
            keep_output=keep_output,
        )
        if self.checkpoints is not None:
            ctx.before_change = self.checkpoints.before_change
        try:
            return self._gate_and_run(call_id, tool, args, ctx)
        finally:
            for writer in kept:
                writer.close()

    def _gate_and_run(
        self, call_id: str, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> tuple[str, ToolStatus, str | None]:
        signals = self.signals
        asked = time.monotonic()
        try:
            verdict = self.gate.review(
                call_id,
                tool,
                args,
                ctx,
                signals.sink,
                lambda: signals.set_spinner(WAITING_FOR_ANSWER),
            )
            self._waited = time.monotonic() - asked
            if not verdict.run:
                self._unanswered = verdict.status is ToolStatus.INTERRUPTED
                return verdict.output, verdict.status, None
            signals.sink(ToolRunning(call_id, tool.name))
            signals.set_spinner(running_state(tool.name))
            try:
                result = tool.run(args, ctx)
            finally:
                if self.checkpoints is not None:
                    self.checkpoints.settle()  # each written file's digest, after the write
        except Exception as exc:  # SPEC §1: an exception escaping a tool is a bug; say it
            log.exception("tool %s raised", tool.name)
            message = f"[error: {tool.name} failed unexpectedly: {type(exc).__name__}: {exc}]"
            self.conversation.add_error("tool", message)
            return message, ToolStatus.FAILED, None
        return result.output, result.status, result.diff

    def _finish(self, call: AssembledCall, record: ToolRecord, output: str) -> None:
        self.conversation.record_tool(call.id, record, output)
        self.signals.sink(
            ToolFinished(
                call.id,
                call.name,
                record.title,
                record.status,
                record.duration,
                output,
                record.diff,
            )
        )
