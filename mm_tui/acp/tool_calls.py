"""Each tool call the way ACP wants it (SPEC §9; seeds/tools-reference.fr.md, "ACP").

bash is `execute`; read_file, read_skill and lsp navigation are `read`; write_file, edit_file
and lsp rename are `edit`. A call names the absolute path it works on as its location; an edit's
change travels as diff content (old and new text, a new file with no old text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import text_block, tool_content, tool_diff_content
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallStatus,
    ToolKind,
)

from mm_tui.acp.file_changes import FileChange
from mm_tui.agent.events import ToolStatus

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, ToolKind] = {
    "bash": "execute",
    "read_file": "read",
    "read_skill": "read",
    "write_file": "edit",
    "edit_file": "edit",
}
#: The tools whose one file is read before they run, to send its change as a diff.
SINGLE_FILE_EDITS = ("write_file", "edit_file")


def tool_kind(name: str, arguments: dict[str, Any]) -> ToolKind:
    """`execute`, `read`, `edit`, or `other` for a tool mm-tui does not have."""
    if name == "lsp":
        return "edit" if _text(arguments.get("action")).lower() == "rename" else "read"
    return _KINDS.get(name, "other")


def tool_status(status: ToolStatus) -> ToolCallStatus:
    """Done is `completed`; failed, timed out, rejected, interrupted or looping is `failed`."""
    return "completed" if status is ToolStatus.DONE else "failed"


def target_path(name: str, arguments: dict[str, Any], cwd: Path) -> Path | None:
    """The absolute path of the file a file tool or the lsp tool works on."""
    if name not in ("read_file", "write_file", "edit_file", "lsp"):
        return None
    path = _text(arguments.get("path"))
    return (cwd / path).resolve() if path.strip() else None


def skill_path(arguments: dict[str, Any], cwd: Path, skills_dir: str) -> Path | None:
    """The file read_skill reads (`<name>.md`, else `<name>/SKILL.md`), when it exists."""
    name = Path(_text(arguments.get("name")).strip()).name
    if not name:
        return None
    root = (cwd / Path(skills_dir).expanduser()).resolve()
    for candidate in (root / f"{name}.md", root / name / "SKILL.md"):
        if candidate.is_file():
            return candidate
    return None


def locations(
    name: str, arguments: dict[str, Any], cwd: Path, skills_dir: str
) -> list[ToolCallLocation]:
    """Where the call works, for the editor to follow: the file, and its line when given."""
    if name == "read_skill":
        path = skill_path(arguments, cwd, skills_dir)
        return [ToolCallLocation(path=str(path))] if path else []
    path = target_path(name, arguments, cwd)
    if path is None:
        return []
    line = _number(arguments.get("start" if name == "read_file" else "line"))
    return [ToolCallLocation(path=str(path), line=line if line > 0 else None)]


def diff_content(changes: list[FileChange]) -> list[ToolContent]:
    return [tool_diff_content(str(c.path), c.new, c.old) for c in changes]


def text_content(text: str) -> list[ToolContent]:
    return [tool_content(text_block(text))] if text else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _number(value: object) -> int:
    try:
        return int(str(value).strip())
    except ValueError:
        return 0
