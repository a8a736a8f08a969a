"""The seed's terminal display (SPEC §9, seeds/tools-reference.fr.md "Affichage terminal").

Before a call, a header naming the tool and what it works on (`🛠️  bash: ls -la`,
`📖 read_skill: go-style`, `🔎 lsp: definition main.go greet`, `📝 edit_file: main.go`); after
it, up to `previewLines` lines of its output, grey and indented, or `(no output)`. A skill's
content is not shown. The answer streams as it comes; the summary line ends the turn.
"""

from __future__ import annotations

import re
from typing import assert_never

from mm_tui.agent.events import (
    AssistantMessageDone,
    Event,
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
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    Usage,
)
from mm_tui.faces.terminal import Style, TerminalWriter
from mm_tui.support.terminal_text import one_line, visible

#: The seed's icon before each tool's name; bash's is followed by two spaces, as in the seed
#: (🛠️ is drawn one column wide by many terminals).
TOOL_ICONS = {
    "bash": "🛠️  ",
    "read_skill": "📖 ",
    "read_file": "📝 ",
    "write_file": "📝 ",
    "edit_file": "📝 ",
    "lsp": "🔎 ",
}
OTHER_TOOL_ICON = "🛠️  "
NO_OUTPUT = "(no output)"
#: A line a tool adds after the output to say how it ended (bash's `[exit code: …]`, `[error:
#: …]`, `[note: …]`, `[output truncated: …]`, `[binary output: …]`).
_CLOSING_LINE = re.compile(r"\[(?:exit code|error|note|output truncated|binary output): .*\]\Z")
MAX_CLOSING_LINES = 3
INDENT = "  "
NOTICE_STYLES: dict[str, Style] = {"error": "red", "warning": "yellow", "loop": "magenta"}


def call_header(event: ToolStarted) -> str:
    """`🛠️  bash: <command>`, `🔎 lsp: rename main.go greet → hello`, `📝 edit_file: a.py`."""
    head, _, rest = event.title.partition(" ")
    name = head if head in TOOL_ICONS else event.name
    if name != head:
        rest = event.title.removeprefix(event.name).strip()
    command = event.arguments.get("command")
    if name == "bash" and isinstance(command, str) and command.strip():
        # the whole command, not only the row title's first line: the person sees what runs;
        # what the title adds after the command (` · timeout 10m`) stays on the header
        shown = f"bash {visible(command.strip(), keep_newlines=False)}"
        added = event.title.removeprefix(shown) if event.title.startswith(shown) else ""
        rest = f"\n{INDENT}".join(command.strip().split("\n")) + added
    icon = TOOL_ICONS.get(name, OTHER_TOOL_ICON)
    return f"{icon}{name}: {rest}" if rest else f"{icon}{name}"


def preview(output: str, limit: int) -> list[str]:
    """At most `limit` lines of `output` and how many were left out; `(no output)` if empty.

    The tool's own closing lines (`[exit code: exit status 2]`, `[error: 30s timeout
    exceeded]`, `[output truncated: …]`) are always shown, after the lines left out: a failure
    must never hide in "… N more lines"."""
    if not output.strip():
        return [NO_OUTPUT]
    lines = output.rstrip("\n").split("\n")
    if len(lines) <= limit:
        return lines
    closing = 0
    while closing < min(MAX_CLOSING_LINES, limit) and _CLOSING_LINE.match(lines[-1 - closing]):
        closing += 1
    head = limit - closing
    hidden = len(lines) - limit
    tail = lines[len(lines) - closing :] if closing else []
    return [*lines[:head], f"… {hidden} more line{'s' if hidden != 1 else ''}", *tail]


class SeedDisplay:
    """The seed's terminal display as an event sink; permission questions are rejected (no one
    is there to answer in `-p`: use --yolo or `permissions: allow`)."""

    def __init__(self, writer: TerminalWriter, preview_lines: int) -> None:
        self.writer = writer
        self.preview_lines = max(preview_lines, 1)
        self._names: dict[str, str] = {}

    def __call__(self, event: Event) -> None:
        match event:
            case TextDelta(text=text):
                self.writer.stream(text)
            case ToolStarted():
                self._names[event.call_id] = event.title.partition(" ")[0]
                self.writer.line(call_header(event), "bold")
            case ToolFinished():
                self._show_output(event)
            case Notice(level=level, text=text):
                self.writer.line(
                    f"[{level}] {one_line(text)}", NOTICE_STYLES.get(level), to_err=True
                )
            case TurnSummary():
                self.writer.line(event.line())
            case (
                TurnStarted()
                | SpinnerChanged()
                | ReasoningDelta()
                | AssistantMessageDone()
                | PermissionRequest()  # answered by headless.NobodyToAsk
                | PermissionResolved()
                | ToolRunning()  # its header was said before: "avant exécution" (the seed)
                | ToolOutputDelta()
                | Usage()
                | TurnEnded()
            ):
                pass  # the seed's display shows none of these
            case _:
                assert_never(event)

    def _show_output(self, event: ToolFinished) -> None:
        name = self._names.pop(event.call_id, event.name)
        if name == "read_skill" and event.status is ToolStatus.DONE:
            return  # the skill's content is not shown (seed: read_skill, "Affichage terminal")
        for line in preview(event.output, self.preview_lines):
            self.writer.line(f"{INDENT}{line}", "grey")

    def finish(self, ended: TurnEnded, status: int) -> None:
        """Nothing more to say: the notices and the summary told the end."""
