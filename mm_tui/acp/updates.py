"""The core's events said in ACP: session updates, and permission questions for the client.

Runs in the core's worker thread, inside the sink, so a file is read at the moment the event
says (before an edit runs, right after it ran). Text for the person (the answer, reasoning,
tool output, notices) goes through `literal`; file contents in diffs travel exactly.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, assert_never

from acp import (
    start_tool_call,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from mm_tui.acp.file_changes import (
    FileChange,
    changes_after,
    changes_before,
    changes_in_diff,
    read_text,
)
from mm_tui.acp.tool_calls import (
    SINGLE_FILE_EDITS,
    ToolContent,
    diff_content,
    locations,
    target_path,
    text_content,
    tool_kind,
    tool_status,
)
from mm_tui.agent.events import (
    AssistantMessageDone,
    Event,
    Notice,
    PermissionAnswer,
    PermissionReply,
    PermissionRequest,
    PermissionResolved,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolRunning,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    Usage,
)
from mm_tui.faces.terminal import LiteralStream
from mm_tui.support.terminal_text import literal, visible

log = logging.getLogger(__name__)

SessionUpdate = (
    AgentMessageChunk | AgentThoughtChunk | UserMessageChunk | ToolCallStart | ToolCallProgress
)
LIVE_OUTPUT_EVERY = 0.3  # seconds between two updates of a running command's output
LIVE_OUTPUT_TAIL = 4000  # characters of it shown while it runs


@dataclass(frozen=True)
class PermissionAsk:
    """A permission question for the client; its answer resolves the core's future."""

    tool_call: ToolCallUpdate
    future: Future[PermissionAnswer | PermissionReply]
    grant: str = ""  # what "allow always" allows, in words (`exactly this command`)


Outgoing = SessionUpdate | PermissionAsk


@dataclass
class _Call:
    name: str
    arguments: dict[str, Any]
    title: str = ""
    old_text: str | None = None  # the file before a write_file or edit_file ran
    path: Path | None = None
    output: str = ""
    last_live: float = 0.0


@dataclass
class EventTranslator:
    """Turns each event into what the client must receive, in order."""

    cwd: Path
    skills_dir: str = ".mm/skills"
    replaying: bool = False  # session/load: the user's messages are sent back too
    _calls: dict[str, _Call] = field(default_factory=dict)
    _answer: LiteralStream = field(default_factory=LiteralStream)
    _thought: LiteralStream = field(default_factory=LiteralStream)
    #: The last turn's summary and, when it ended in an error, that error's line: the prompt's
    #: answer says them (its `_meta`, its JSON-RPC error), not the assistant's text.
    summary: TurnSummary | None = None
    failure: str | None = None
    _errors: list[str] = field(default_factory=list)
    _notices: int = 0
    #: A file's text as the tools last saw it: the disk's, or the editor's buffer when the
    #: editor holds the files (the diffs then show the change to the text planned on).
    read_current: Callable[[Path], str | None] = read_text
    #: The call now running (a command lent to the editor's terminal embeds it in this call).
    running_call: str = ""
    #: Calls whose command ran in an editor terminal: their terminal's id.
    terminals: dict[str, str] = field(default_factory=dict)

    def title_of(self, call_id: str) -> str:
        call = self._calls.get(call_id)
        return call.title if call is not None else ""

    def take_turn_end(self) -> tuple[TurnSummary | None, str | None]:
        """The summary and failure of the turn just ended, forgotten once taken."""
        taken = (self.summary, self.failure)
        self.summary = self.failure = None
        return taken

    def _notice(self, level: str, text: str) -> ToolCallStart:
        """mm-tui's own line (a warning, a loop verdict, a fault): not the model's words, so
        not an agent message. ACP has no notice update; a finished tool call of kind `other`
        titled with the line is shown apart by Zed and Toad, and `_meta` says what it is."""
        self._notices += 1
        shown = literal(text)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=f"mm-notice-{self._notices}",
            title=f"{level}: {shown.splitlines()[0] if shown else level}",
            kind="other",
            status="failed" if level in ("error", "loop") else "completed",
            content=text_content(shown),
            field_meta={"mm-tui": {"notice": level}},
        )

    def translate(self, event: Event) -> list[Outgoing]:
        match event:
            case TurnStarted(text=text):
                return [update_user_message_text(text)] if self.replaying else []
            case TextDelta(text=text):
                return _message(self._answer.feed(text))
            case ReasoningDelta(text=text):
                return _thought(self._thought.feed(text))
            case AssistantMessageDone():
                return _message(self._answer.flush()) + _thought(self._thought.flush())
            case ToolStarted():
                return [self._started(event)]
            case PermissionRequest():
                return [self._ask(event)]
            case ToolRunning(call_id=call_id):
                self._running(call_id)
                return [update_tool_call(call_id, status="in_progress")]
            case ToolOutputDelta(call_id=call_id, text=text):
                return self._live_output(call_id, text)
            case ToolFinished():
                return [self._finished(event)]
            case Notice(level="error", text=text):
                self._errors.append(text)  # the turn's failure, if it ends in one (prompt's error)
                return []
            case Notice(level=level, text=text):
                return [self._notice(level, text)]
            case TurnSummary():
                self.summary = event  # the prompt's answer carries it, in its _meta
                return []
            case TurnEnded(reason=reason, error=error):
                errors, self._errors = self._errors, []
                if reason == "error" and not self.replaying:  # said by the prompt's error
                    self.failure = error or (errors[-1] if errors else "the turn failed")
                    errors = [e for e in errors if e != self.failure]
                return [self._notice("error", text) for text in errors]
            case SpinnerChanged() | PermissionResolved() | Usage():
                return []
            case _:
                assert_never(event)

    def _started(self, event: ToolStarted) -> ToolCallStart:
        call = _Call(event.name, dict(event.arguments), literal(event.title))
        self._calls[event.call_id] = call
        call.path = target_path(event.name, call.arguments, self.cwd)
        if event.name in SINGLE_FILE_EDITS and call.path is not None:
            call.old_text = self.read_current(call.path)
        return start_tool_call(
            event.call_id,
            call.title,
            kind=tool_kind(event.name, call.arguments),
            status="pending",
            locations=locations(event.name, call.arguments, self.cwd, self.skills_dir),
            raw_input=call.arguments,
        )

    def _ask(self, event: PermissionRequest) -> PermissionAsk:
        call = self._calls.get(event.call_id) or _Call(event.name, {})
        content = self._planned_changes(call, event.diff)
        if not content:  # what will run, every hiding character shown (`\r`, `\u202e`…)
            content = text_content(visible(event.detail))
        tool_call = ToolCallUpdate(
            tool_call_id=event.call_id,
            title=literal(event.title),
            kind=tool_kind(event.name, call.arguments),
            status="pending",
            content=content,
        )
        return PermissionAsk(tool_call, event.future, visible(event.grant, keep_newlines=False))

    def _planned_changes(self, call: _Call, diff: str | None) -> list[ToolContent]:
        """What an edit would change, before it runs, on the text the tool just planned on:
        write_file's content is the new text."""
        content = call.arguments.get("content")
        if call.name in SINGLE_FILE_EDITS and call.path is not None:
            call.old_text = self.read_current(call.path)
        if call.name == "write_file" and call.path is not None and isinstance(content, str):
            if content == call.old_text:
                return []
            return diff_content([FileChange(call.path, call.old_text, content)])
        return diff_content(changes_before(diff, self.cwd, self.read_current)) if diff else []

    def _running(self, call_id: str) -> None:
        """The call's permission is settled and its tool starts: the text its plan was made
        on is the one the change is shown against."""
        self.running_call = call_id
        call = self._calls.get(call_id)
        if call is not None and call.name in SINGLE_FILE_EDITS and call.path is not None:
            call.old_text = self.read_current(call.path)

    def _live_output(self, call_id: str, text: str) -> list[Outgoing]:
        call = self._calls.get(call_id)
        if call is None:
            return []
        call.output += text
        now = time.monotonic()
        if now - call.last_live < LIVE_OUTPUT_EVERY:
            return []
        call.last_live = now
        shown = literal(call.output[-LIVE_OUTPUT_TAIL:])
        return [update_tool_call(call_id, status="in_progress", content=text_content(shown))]

    def _finished(self, event: ToolFinished) -> ToolCallProgress:
        call = self._calls.pop(event.call_id, None) or _Call(event.name, {})
        self.running_call = ""
        terminal = self.terminals.pop(event.call_id, None)
        if terminal is not None:  # the editor shows the output; the text adds how it ended
            ending = _ending(literal(event.output)) if event.status is not ToolStatus.DONE else ""
            content = [tool_terminal_ref(terminal), *text_content(ending)]
            status = tool_status(event.status)
            return update_tool_call(event.call_id, status=status, content=content)
        content: list[ToolContent] = []
        if event.status is ToolStatus.DONE and event.diff:
            made = (
                changes_in_diff(event.diff, self.cwd)  # the files have moved on since
                if self.replaying
                else self._made_changes(call, event.diff)
            )
            content = diff_content(made)
        content += text_content(literal(event.output))
        return update_tool_call(event.call_id, status=tool_status(event.status), content=content)

    def _made_changes(self, call: _Call, diff: str) -> list[FileChange]:
        """What an edit changed: the file before it ran and as it is now (a rename: undo its
        diff on the files as they are now)."""
        if call.name in SINGLE_FILE_EDITS and call.path is not None:
            new = self.read_current(call.path)
            if new is not None and new != call.old_text:
                return [FileChange(call.path, call.old_text, new)]
            return []
        return changes_after(diff, self.cwd)


def _ending(output: str) -> str:
    """The lines a command's output ends with that say how it ended (`[exit code: …]`)."""
    lines = output.rstrip("\n").split("\n")
    tail: list[str] = []
    while lines and lines[-1].startswith("[") and lines[-1].endswith("]"):
        tail.insert(0, lines.pop())
    return "\n".join(tail)


def _message(text: str) -> list[Outgoing]:
    return [update_agent_message_text(text)] if text else []


def _thought(text: str) -> list[Outgoing]:
    return [update_agent_thought_text(text)] if text else []
