"""What the window says after `/undo`: which files came back, which went, and why
nothing was restored when the person changed a file after the turn. Plain data to lines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mm_tui.agent.events import NoticeLevel
from mm_tui.support.terminal_text import first_line

if TYPE_CHECKING:
    from mm_tui.agent.checkpoints import UndoResult

NOTHING_TO_UNDO = "/undo: nothing to undo — no turn of this session changed a file"
CHANGED_SINCE = (
    "/undo: nothing restored — changed since the turn: {files}. /undo force puts the turn's "
    "files back anyway, and those changes are lost"
)
UNDONE = "undid the turn “{prompt}”: {what}"
RESTORED = "restored {files}"
REMOVED = "removed {files} (the turn created it)"
OVERWRITTEN = "/undo force: your later changes to {files} were replaced"
NOT_RESTORED = "/undo: could not restore {failure}"
BACK_IN_PROMPT = "its message is back in the prompt"
UNDO_USAGE = "usage: /undo [force]"
_PROMPT_SHOWN = 60  # characters of the turn's message in the line


def undo_lines(result: UndoResult, cwd: Path) -> list[tuple[NoticeLevel, str]]:
    """The notice lines for one `/undo`, in order."""
    from mm_tui.agent.checkpoints import shown_path  # loaded with the core, not at start-up

    def names(paths: tuple[str, ...]) -> str:
        return ", ".join(
            shown_path(p, cwd) + (" (deleted)" if p in result.deleted_since else "") for p in paths
        )

    if result.prompt is None:
        if result.changed_since:
            return [("warning", CHANGED_SINCE.format(files=names(result.changed_since)))]
        return [("info", NOTHING_TO_UNDO)]
    what: list[str] = []
    if result.restored:
        what.append(RESTORED.format(files=names(result.restored)))
    if result.removed:
        what.append(REMOVED.format(files=names(result.removed)))
    prompt = first_line(result.prompt)
    if len(prompt) > _PROMPT_SHOWN:
        prompt = prompt[: _PROMPT_SHOWN - 1] + "…"
    lines: list[tuple[NoticeLevel, str]] = [
        ("info", UNDONE.format(prompt=prompt, what="; ".join(what) or "no file"))
    ]
    if result.changed_since:
        lines.append(("warning", OVERWRITTEN.format(files=names(result.changed_since))))
    for failure in result.failed:
        lines.append(("error", NOT_RESTORED.format(failure=failure)))
    lines.append(("info", BACK_IN_PROMPT))
    return lines
