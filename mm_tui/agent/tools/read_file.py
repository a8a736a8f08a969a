"""`read_file`: the lines of a file, optionally a range and numbered (SPEC §4).

The final newline is kept only when the end of the file is shown, so a slice never looks like
a whole file. When the output must be cut to `maxOutput`, it is cut between lines and the
last line says which lines are missing and how to read them: a small model then continues
with `start` instead of guessing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.rules import Rule, Subject, path_grant
from mm_tui.agent.tools.arguments import (
    ArgumentProblem,
    argument_map,
    boolean_field,
    integer_field,
    lenient_integer,
    lenient_string,
    string_field,
)
from mm_tui.agent.tools.base import (
    Tool,
    ToolContext,
    ToolKind,
    ToolPreview,
    ToolResult,
    truncate_output,
)
from mm_tui.agent.tools.file_messages import CANNOT_READ, MISSING_FILE
from mm_tui.agent.tools.file_text import displayable, looks_binary
from mm_tui.agent.tools.line_slice import LineSlice, PastEnd, read_line_slice
from mm_tui.agent.tools.paths import clean_path_text, is_inside, resolve_path, shown_location
from mm_tui.agent.tools.safe_files import NOT_REGULAR, NotRegularFile, open_regular

NAME = "read_file"
DESCRIPTION = (
    "Read a text file. Read a file before you edit it, and read it again after a change you "
    "are unsure of: the file on disk is the truth. For a long file, read the part you need "
    'with start and end. Example: {"path": "src/app.py", "start": 40, "end": 80, '
    '"numbered": true}'
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File path, relative to the project."},
        "start": {"type": "integer", "description": "First line, 1-based; 0 = from the start."},
        "end": {"type": "integer", "description": "Last line, inclusive; 0 = to the end."},
        "numbered": {"type": "boolean", "description": "Prefix each line with its number."},
    },
    "required": ["path"],
}

READ_REJECTED = "[read rejected by the user]"
EMPTY_FILE = "{path} is empty"
BINARY_FILE = "{path} is a binary file ({size} bytes); read_file shows text files only"
DIRECTORY_HEADER = "{path} is a directory; its entries:"
EMPTY_DIRECTORY = "{path} is an empty directory"
START_PAST_END = "[error: {path} has {total} lines; start {start} is past the end]"
END_BEFORE_START = '[error: read_file "end" ({end}) is before "start" ({start})]'
NEGATIVE_LINE = '[error: read_file needs "{field}" (a line number, 0 or more)]'
CUT_BETWEEN_LINES = (
    '[output truncated: lines {first}-{last} not shown; read them with "start": {first}]'
)
CUT_INSIDE_LINE = "[output truncated: line {line} is cut after {shown} characters{rest}]"
NUMBER_WIDTH = 6  # as `cat -n`: the number right-aligned in 6 columns, then a tab


class ReadFileTool(Tool):
    """Reads a file (or lists a directory) from disk on every call. Asks only for a path
    outside the project (`~/.ssh`, `/etc/shadow`, the config holding the key)."""

    name = NAME
    kind = ToolKind.FILE
    rejection_text = READ_REJECTED
    fixed_description = DESCRIPTION
    parameters = PARAMETERS

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        path = self._path(args, ctx.cwd) if ctx is not None else None
        return path is not None and not is_inside(path, ctx.cwd if ctx else Path.cwd())

    def subject(self, args: dict[str, Any], ctx: ToolContext) -> Subject | None:
        path = self._path(args, ctx.cwd)
        return Subject(NAME, path=path) if path is not None else None

    def grant(self, args: dict[str, Any], ctx: ToolContext) -> Rule:
        """`s` allows reading this file's folder for the session (the file's, outside)."""
        path = self._path(args, ctx.cwd)
        return path_grant(NAME, path, ctx.cwd) if path is not None else Rule(NAME, None, NAME)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        path = self._path(args, ctx.cwd)
        title = self.title(args)
        location = shown_location(path, ctx.cwd) if path is not None else ""
        return ToolPreview(title=title, detail=title, location=location)

    @staticmethod
    def _path(args: dict[str, Any], cwd: Path) -> Path | None:
        raw = lenient_string(args, "path")
        if not raw.strip():
            return None
        try:
            return resolve_path(cwd, raw)
        except ArgumentProblem:
            return None

    def title(self, args: dict[str, Any]) -> str:
        path = lenient_string(args, "path")
        start, end = lenient_integer(args, "start"), lenient_integer(args, "end")
        span = f":{max(start, 1)}-{end if end > 0 else ''}" if start > 0 or end > 0 else ""
        return f"{NAME} {path}{span}".rstrip()

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        args = argument_map(args)
        try:
            raw_path = string_field(args, NAME, "path")
            start = integer_field(args, NAME, "start")
            end = integer_field(args, NAME, "end")
            numbered = boolean_field(args, NAME, "numbered")
        except ArgumentProblem as problem:
            return ToolResult(str(problem), ToolStatus.FAILED)
        for field, value in (("start", start), ("end", end)):
            if value < 0:
                return ToolResult(NEGATIVE_LINE.format(field=field), ToolStatus.FAILED)
        if end > 0 and end < max(start, 1):
            return ToolResult(END_BEFORE_START.format(end=end, start=start), ToolStatus.FAILED)
        try:
            path = resolve_path(ctx.cwd, raw_path)
        except ArgumentProblem as problem:
            return ToolResult(str(problem), ToolStatus.FAILED)
        shown_path = clean_path_text(raw_path)
        try:
            if path.is_dir():
                return ToolResult(_list_directory(path, shown_path, ctx.max_output))
            return _read_lines(path, shown_path, start, end, numbered, ctx.max_output)
        except FileNotFoundError:
            return ToolResult(MISSING_FILE.format(path=shown_path), ToolStatus.FAILED)
        except NotRegularFile as error:
            message = NOT_REGULAR.format(path=shown_path, kind=error.kind)
            return ToolResult(message, ToolStatus.FAILED)
        except OSError as error:
            reason = error.strerror or str(error)
            return ToolResult(CANNOT_READ.format(path=shown_path, reason=reason), ToolStatus.FAILED)


def _read_lines(
    path: Path, shown_path: str, start: int, end: int, numbered: bool, max_output: int
) -> ToolResult:
    with open_regular(path) as source:
        head = source.read(8192)
        if looks_binary(head):
            size = os.fstat(source.fileno()).st_size
            return ToolResult(BINARY_FILE.format(path=shown_path, size=size), ToolStatus.FAILED)
        source.seek(0)
        # chars >= bytes / 4 in UTF-8: this many bytes always fill max_output characters.
        found = read_line_slice(source, start, end, byte_budget=4 * (max_output + 1))
    if isinstance(found, PastEnd):
        if found.total_lines == 0 and start <= 1:
            return ToolResult(EMPTY_FILE.format(path=shown_path))
        message = START_PAST_END.format(path=shown_path, total=found.total_lines, start=start)
        return ToolResult(message, ToolStatus.FAILED)
    return ToolResult(_render(found, numbered, max_output))


def _render(found: LineSlice, numbered: bool, max_output: int) -> str:
    """The lines as text, cut between lines to `max_output` with a line saying what is left."""
    text = displayable(found.data.decode("utf-8", errors="replace"))
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the data ends with a newline: no partial last line
    keep_final_newline = found.complete and found.reaches_end and text.endswith("\n")
    pieces: list[str] = []
    used = 0
    for index, line in enumerate(lines):
        number = found.first_line + index
        if number > found.last_line:
            break
        piece = f"{number:>{NUMBER_WIDTH}}\t{line}" if numbered else line
        cost = len(piece) + (1 if pieces else 0)
        if used + cost > max_output:
            return _cut(pieces, piece, number, found.last_line, max_output - used, numbered)
        pieces.append(piece)
        used += cost
    return "\n".join(pieces) + ("\n" if keep_final_newline else "")


def _cut(
    pieces: list[str], piece: str, number: int, last_line: int, room: int, numbered: bool
) -> str:
    """The output cut before line `number` (or inside it, when it is the first line shown)."""
    if pieces:
        note = CUT_BETWEEN_LINES.format(first=number, last=last_line)
        return "\n".join(pieces) + "\n" + note
    prefix = len(f"{number:>{NUMBER_WIDTH}}\t") if numbered else 0
    shown = max(room, prefix)
    rest = f"; lines {number + 1}-{last_line} not shown" if last_line > number else ""
    note = CUT_INSIDE_LINE.format(line=number, shown=shown - prefix, rest=rest)
    return piece[:shown] + "\n" + note


def _list_directory(path: Path, shown_path: str, max_output: int) -> str:
    """A directory's entries, sub-directories marked with `/`, so the model can pick a file."""
    with os.scandir(path) as scan:
        entries = sorted(entry.name + ("/" if entry.is_dir() else "") for entry in scan)
    if not entries:
        return EMPTY_DIRECTORY.format(path=shown_path)
    header = DIRECTORY_HEADER.format(path=shown_path)
    return truncate_output("\n".join([header, *entries]), max_output)
