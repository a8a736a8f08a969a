"""`write_file`: create a file or replace it whole, and show what changed (SPEC §4).

The permission question shows the diff that would be written; identical content writes
nothing and says so (and then no question is asked: there is nothing to allow).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.rules import Rule, Subject, path_grant
from mm_tui.agent.tools.arguments import (
    ArgumentProblem,
    argument_map,
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
from mm_tui.agent.tools.diffs import FileDiff, diff_texts
from mm_tui.agent.tools.file_messages import CANNOT_READ, CANNOT_WRITE
from mm_tui.agent.tools.file_messages import EDIT_REJECTED as REJECTED
from mm_tui.agent.tools.file_text import count_lines, decode_file_text, encode_file_text, plural
from mm_tui.agent.tools.paths import (
    clean_path_text,
    path_title,
    resolve_path,
    shown_location,
)
from mm_tui.agent.tools.safe_files import (
    MAX_EDIT_BYTES,
    NOT_REGULAR,
    TOO_LARGE,
    FileTooLarge,
    NotRegularFile,
    read_regular,
    refuse_special_file,
    stamp,
)
from mm_tui.support.guarded_write import (
    NOT_WRITTEN,
    FileSeen,
    NotWritten,
    see,
    shown_plan,
    write_seen,
)

NAME = "write_file"
CREATED_HEADER = "created {path}: {lines}"
REPLACED_HEADER = "wrote {path}: +{added} -{removed} lines, first change at line {first}"
UNCHANGED = "{path} already has exactly this content; nothing was written"
IS_DIRECTORY = "[error: {path} is a directory; write_file writes files]"

DESCRIPTION = (
    "Create a file, or replace a whole file, with the given content. Parent directories "
    "are created. To change part of an existing file use edit_file instead. "
    'Example: {"path": "src/hello.py", "content": "print(\\"hello\\")\\n"}'
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File path, relative to the project."},
        "content": {"type": "string", "description": "The whole content of the file."},
    },
    "required": ["path", "content"],
}


@dataclass(frozen=True)
class _WritePlan:
    """What a call would do, computed the same way for the question and for the run."""

    path: Path
    shown_path: str
    data: bytes
    header: str
    diff: FileDiff
    unchanged: bool
    #: The file's stamp when it was read: the run writes only if the file is still this one.
    basis: str = ""
    #: Where the file really was and what it held when read: the write checks both.
    seen: FileSeen | None = None


class WriteFileTool(Tool):
    """Writes whole files atomically, keeping an existing file's mode."""

    name = NAME
    kind = ToolKind.FILE
    rejection_text = REJECTED
    fixed_description = DESCRIPTION
    parameters = PARAMETERS

    def title(self, args: dict[str, Any]) -> str:
        return path_title(NAME, args)

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """Only a call that would change the disk asks: wrong arguments never do, and with
        `ctx` (to find the file) neither does identical content."""
        if ctx is None:
            args = argument_map(args)
            return isinstance(args.get("path"), str) and isinstance(args.get("content"), str)
        plan = _plan(args, ctx)
        return not isinstance(plan, ToolResult) and not plan.unchanged

    def subject(self, args: dict[str, Any], ctx: ToolContext) -> Subject | None:
        plan = _plan(args, ctx)
        return None if isinstance(plan, ToolResult) else Subject(NAME, path=plan.path)

    def grant(self, args: dict[str, Any], ctx: ToolContext) -> Rule:
        """`s` allows writes in this file's folder (the file alone outside the project)."""
        plan = _plan(args, ctx)
        if isinstance(plan, ToolResult):
            return Rule(NAME, None, NAME)
        return path_grant(NAME, plan.path, ctx.cwd)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        plan = _plan(args, ctx)
        if isinstance(plan, ToolResult):
            return ToolPreview(title=self.title(args), detail=plan.output)
        return ToolPreview(
            title=self.title(args),
            detail=plan.header,
            diff=plan.diff.unified,
            basis=plan.basis,
            location=shown_location(plan.path, ctx.cwd),
        )

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = _shown_plan(args, ctx)
        if isinstance(plan, ToolResult):
            return plan
        if plan.unchanged:
            return ToolResult(UNCHANGED.format(path=plan.shown_path))
        ctx.before_change(plan.path)
        try:
            if plan.seen is None:
                raise NotWritten(WHY_UNREAD)
            write_seen(plan.seen, plan.data)
        except NotWritten as refused:
            message = NOT_WRITTEN.format(path=plan.shown_path, why=refused.why)
            return ToolResult(message, ToolStatus.FAILED)
        except OSError as error:
            reason = error.strerror or str(error)
            message = CANNOT_WRITE.format(path=plan.shown_path, reason=reason)
            return ToolResult(message, ToolStatus.FAILED)
        output = f"{plan.header}\n{plan.diff.numbered}" if plan.diff.numbered else plan.header
        return ToolResult(truncate_output(output, ctx.max_output), diff=plan.diff.unified)


WHY_UNREAD = "it could not be read before writing"


def _shown_plan(args: dict[str, Any], ctx: ToolContext) -> _WritePlan | ToolResult:
    """The plan the question showed (kept for the call), else a fresh one: the run never
    re-plans against a file swapped after the answer, it writes what was approved or nothing."""
    return shown_plan(ctx.memo, NAME, argument_map(args)) or _plan(args, ctx)


def _plan(args: dict[str, Any], ctx: ToolContext) -> _WritePlan | ToolResult:
    """Read the current file and diff it against `content`; a ToolResult when that fails.

    The plan is kept for the call (`ctx.memo`): the question, the re-check after the answer
    and the run read the file once, and again only when its stamp changed."""
    args = argument_map(args)
    try:
        raw_path = string_field(args, NAME, "path")
        content = string_field(args, NAME, "content")
        path = resolve_path(ctx.cwd, raw_path)
    except ArgumentProblem as problem:
        return ToolResult(str(problem), ToolStatus.FAILED)
    shown_path = clean_path_text(raw_path)
    basis = stamp(path)
    cached = ctx.memo.get(NAME)
    if isinstance(cached, tuple) and cached[:3] == (args, path, basis):
        return cached[3]
    if path.is_dir():
        return ToolResult(IS_DIRECTORY.format(path=shown_path), ToolStatus.FAILED)
    data = encode_file_text(content)
    try:
        refuse_special_file(path)
        previous: bytes | None = read_regular(path)
    except FileNotFoundError:
        previous = None
    except NotRegularFile as error:
        return ToolResult(NOT_REGULAR.format(path=shown_path, kind=error.kind), ToolStatus.FAILED)
    except FileTooLarge:
        return ToolResult(
            TOO_LARGE.format(path=shown_path, limit=MAX_EDIT_BYTES >> 20), ToolStatus.FAILED
        )
    except OSError as error:
        reason = error.strerror or str(error)
        return ToolResult(CANNOT_READ.format(path=shown_path, reason=reason), ToolStatus.FAILED)
    seen = see(path, previous)
    if previous is None:
        diff = diff_texts("", content, shown_path, created=True)
        header = CREATED_HEADER.format(path=shown_path, lines=plural(count_lines(content), "line"))
        plan = _WritePlan(path, shown_path, data, header, diff, False, basis, seen)
        return _remember(ctx, args, plan)
    if previous == data:
        header = UNCHANGED.format(path=shown_path)
        same = diff_texts("", "", shown_path)
        return _remember(ctx, args, _WritePlan(path, shown_path, data, header, same, True, basis))
    diff = diff_texts(decode_file_text(previous), content, shown_path)
    header = REPLACED_HEADER.format(
        path=shown_path, added=diff.added, removed=diff.removed, first=diff.first_changed_line
    )
    return _remember(
        ctx, args, _WritePlan(path, shown_path, data, header, diff, False, basis, seen)
    )


def _remember(ctx: ToolContext, args: dict[str, Any], plan: _WritePlan) -> _WritePlan:
    ctx.memo[NAME] = (args, plan.path, plan.basis, plan)
    return plan
