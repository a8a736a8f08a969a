"""`!command`: the person runs a shell command from the prompt.

It goes through the model's own bash tool and permission gate (ask/allow/deny rules, yolo,
session grants), and shows as the same row. Its output is what the model would have got (cut
to `maxOutput`, the exit code said) and goes along with the person's next message, after its
text like an `@` file, so the model sees what the person saw without being asked to run it.
A rejected or interrupted command attaches nothing. Other news for the model that waits for
the next message (an `/undo`) travels the same way (`note`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from mm_tui.agent.events import PERSON_CALL_PREFIX, Notice, ToolStatus, TurnEnded
from mm_tui.agent.tool_calls import ToolRunner
from mm_tui.agent.tools.registry import ToolRegistry
from mm_tui.agent.turn_signals import TurnSignals
from mm_tui.support.terminal_text import visible

BASH = "bash"
NO_BASH = "!: the bash tool is off (bashTool: false in the config)"
ATTACHED = "📎 the output of !{command} goes along with your next message"
#: Commands whose output waits for the next message; older ones are dropped, said so.
MAX_PENDING = 8
DROPPED = "📎 the output of !{command} no longer goes along: only the last {limit} are kept"
#: How a command's output is written into the next user message.
BLOCK = "<shell-command>\n$ {command}\n{output}\n</shell-command>"


@dataclass(frozen=True)
class PendingOutput:
    """What waits for the person's next message: a command's output, or a note."""

    command: str  # "" for a note
    block: str


class ShellCommands:
    """Runs the person's commands; keeps their outputs until the next message takes them."""

    def __init__(self, registry: ToolRegistry, tools: ToolRunner, signals: TurnSignals) -> None:
        self.registry = registry
        self.tools = tools
        self.signals = signals
        self.pending: list[PendingOutput] = []

    def run(self, command: str) -> TurnEnded:
        """Run `command` (blocking) through bash and its gate; the output waits for the next
        message. Esc (the turn's cancel flag) ends its process group as for the model."""
        tool = self.registry.get(BASH)
        if tool is None:
            self.signals.sink(Notice("warning", NO_BASH))
            return TurnEnded("error", NO_BASH)
        # Unique across runs of mm-tui: the full output is kept under this id beside the session.
        call_id = f"{PERSON_CALL_PREFIX}{os.urandom(6).hex()}"
        status, output = self.tools.run_for_person(call_id, tool, command)
        if status in (ToolStatus.REJECTED, ToolStatus.INTERRUPTED):
            return TurnEnded("interrupted" if status is ToolStatus.INTERRUPTED else "answered")
        self._add(PendingOutput(command, BLOCK.format(command=command, output=output)))
        shown = visible(command, keep_newlines=False)  # as the row's title shows it
        self.signals.sink(Notice("info", ATTACHED.format(command=shown)))
        return TurnEnded("answered")

    def note(self, block: str) -> None:
        """News for the model (an undo) that goes along with the next message."""
        self._add(PendingOutput("", block))

    def _add(self, pending: PendingOutput) -> None:
        self.pending.append(pending)
        if len(self.pending) > MAX_PENDING:
            dropped = self.pending.pop(0)
            if dropped.command:
                shown = visible(dropped.command, keep_newlines=False)
                note = DROPPED.format(command=shown, limit=MAX_PENDING)
                self.signals.sink(Notice("info", note))

    def attach_to(self, text: str) -> str:
        """The next message with the waiting outputs after its text; they are taken."""
        if not self.pending:
            return text
        blocks = [pending.block for pending in self.pending]
        self.pending.clear()
        return "\n\n".join([text, *blocks])

    def forget(self) -> None:
        """`/new`: outputs of the old conversation do not go into the new one."""
        self.pending.clear()
