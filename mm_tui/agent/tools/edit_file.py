"""`edit_file`: exact text replacements in one file, all or nothing (SPEC §4).

Every `old` must occur exactly once in the file as it is on disk; the edits are located in
that original text (never in the text of a previous edit), may not overlap, nest or repeat,
and a single refused edit means nothing is written. A file with CRLF line ends accepts an
`old` written with LF, since a model cannot see the difference.

`needs_permission` answers False for a dry run and for wrong arguments, and — when given the
context to read the file — for an edit that will be refused or changes nothing: the person is
not asked about a no-op. The question's preview carries the diff that would be written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.rules import Rule, Subject, path_grant
from mm_tui.agent.tools import diffs
from mm_tui.agent.tools.arguments import (
    ArgumentProblem,
    argument_map,
    boolean_field,
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
from mm_tui.agent.tools.closest_lines import explain_missing
from mm_tui.agent.tools.diffs import FileDiff, Replacement, apply_replacements, diff_replacements
from mm_tui.agent.tools.file_messages import CANNOT_READ, CANNOT_WRITE, MISSING_FILE
from mm_tui.agent.tools.file_messages import EDIT_REJECTED as REJECTED
from mm_tui.agent.tools.file_text import decode_file_text, encode_file_text, looks_binary, plural
from mm_tui.agent.tools.paths import clean_path_text, path_title, resolve_path, shown_location
from mm_tui.agent.tools.safe_files import (
    MAX_EDIT_BYTES,
    NOT_REGULAR,
    TOO_LARGE,
    FileTooLarge,
    NotRegularFile,
    read_regular,
    stamp,
)
from mm_tui.support import guarded_write as guard

NAME = "edit_file"
HARD_LINKS = (
    "[note: {path} has {count} other hard link(s): it was written in place, so every name "
    "shows the change]"
)
AMBIGUOUS = (
    "old text appears {count} times (lines {lines}) — to change ONE of them, include its "
    "surrounding lines in old until the text is unique; to change several, send one edit "
    "per place"
)
EMPTY_OLD = (
    "old is empty; to insert text, put the neighbouring line in old and write it again in "
    "new together with your text"
)
REPEATS = "it repeats edit {other}; send each change once"
NESTED = "it lies inside edit {other}; merge the two into one edit"
OVERLAPS = "it overlaps edit {other} (both change line {line}); merge the two into one edit"
REFUSED_HEADER = "nothing was written to {path}: {what}"
APPLIED_HEADER = (
    "edited {path}: {edits} applied, +{added} -{removed} lines, first change at line {first}"
)
DRY_RUN_HEADER = (
    "dry run, nothing written: {edits} would apply to {path}, +{added} -{removed} lines, "
    "first change at line {first}"
)
PREVIEW_HEADER = "{edits} to {path}: +{added} -{removed} lines, first change at line {first}"
NO_CHANGE = "the edits leave {path} unchanged (each new equals its old); nothing was written"
IS_DIRECTORY = "[error: {path} is a directory; edit_file edits one file]"
BINARY_FILE = "[error: {path} is a binary file; edit_file edits text files only]"
EDITS_FIELD = '[error: edit_file needs "edits" (an array of {"old": "...", "new": "..."})]'
EDIT_FIELD = '[error: edit_file edit {number} needs "{field}" (a string{hint})]'
LISTED_LINES = 10  # the ambiguity message names at most this many lines
_FIND_CAP = LISTED_LINES + 1

DESCRIPTION = (
    "Change parts of an existing file by exact text replacement. Read the file first. "
    "Each old must be copied exactly from the file (whitespace included) and occur exactly "
    "once: add surrounding lines to make it unique. One edit per place; all edits apply to "
    "the file as it is now. dry_run shows the diff without writing. Example: "
    '{"path": "src/app.py", "edits": [{"old": "    return a - b\\n", '
    '"new": "    return a + b\\n"}]}'
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Path of an existing file."},
        "edits": {
            "type": "array",
            "description": "Replacements, each against the current file.",
            "items": {
                "type": "object",
                "properties": {
                    "old": {"type": "string", "description": "Exact text, found once."},
                    "new": {"type": "string", "description": "Its replacement; empty deletes."},
                },
                "required": ["old", "new"],
            },
        },
        "dry_run": {"type": "boolean", "description": "Show the diff, write nothing."},
    },
    "required": ["path", "edits"],
}


@dataclass(frozen=True)
class _Edit:
    number: int  # 1-based, in the order the model gave them
    old: str
    new: str


@dataclass(frozen=True)
class _EditPlan:
    """A batch that will apply: what to write and how to describe it."""

    path: Path
    shown_path: str
    data: bytes
    diff: FileDiff
    edit_count: int
    dry_run: bool
    #: The file's stamp when it was read: the run writes only if the file is still this one.
    basis: str = ""
    seen: guard.FileSeen | None = None
    edits: tuple[_Edit, ...] = ()


class EditFileTool(Tool):
    """Applies a batch of exact replacements atomically, or explains why it will not."""

    name = NAME
    kind = ToolKind.FILE
    rejection_text = REJECTED
    fixed_description = DESCRIPTION
    parameters = PARAMETERS

    def title(self, args: dict[str, Any]) -> str:
        return path_title(NAME, args)

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """True only for a call that would write; see the module docstring."""
        try:
            _parse(args)
        except ArgumentProblem:
            return False
        if _is_dry_run(args):
            return False
        return ctx is None or isinstance(_plan(args, ctx), _EditPlan)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        plan = _plan(args, ctx)
        if isinstance(plan, ToolResult):
            return ToolPreview(title=self.title(args), detail=plan.output)
        detail = _header(PREVIEW_HEADER, plan)
        return ToolPreview(
            title=self.title(args),
            detail=detail,
            diff=plan.diff.unified,
            basis=plan.basis,
            location=shown_location(plan.path, ctx.cwd),
        )

    def subject(self, args: dict[str, Any], ctx: ToolContext) -> Subject | None:
        plan = _plan(args, ctx)
        return Subject(NAME, path=plan.path) if isinstance(plan, _EditPlan) else None

    def grant(self, args: dict[str, Any], ctx: ToolContext) -> Rule:
        """`s` allows edits in this file's folder (the file alone outside the project)."""
        plan = _plan(args, ctx)
        if not isinstance(plan, _EditPlan):
            return Rule(NAME, None, NAME)
        return path_grant(NAME, plan.path, ctx.cwd)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = guard.shown_plan(ctx.memo, NAME, args) or _plan(args, ctx)
        if isinstance(plan, ToolResult):
            return plan
        links = 0
        if not plan.dry_run:
            ctx.before_change(plan.path)
            applied = [plan]
            try:
                assert plan.seen is not None  # every plan that writes saw the file
                links = guard.write_seen(plan.seen, plan.data, lambda now: _again(applied, now))
            except guard.NotWritten as refused:
                message = guard.NOT_WRITTEN.format(path=plan.shown_path, why=refused.why)
                return ToolResult(message, ToolStatus.FAILED)
            except OSError as error:
                reason = error.strerror or str(error)
                message = CANNOT_WRITE.format(path=plan.shown_path, reason=reason)
                return ToolResult(message, ToolStatus.FAILED)
            plan = applied[0]
        header = _header(DRY_RUN_HEADER if plan.dry_run else APPLIED_HEADER, plan)
        if links:
            header += "\n" + HARD_LINKS.format(path=plan.shown_path, count=links)
        output = truncate_output(f"{header}\n{plan.diff.numbered}", ctx.max_output)
        return ToolResult(output, diff=plan.diff.unified)


def _again(applied: list[_EditPlan], current: bytes) -> bytes | str:
    """The edits applied again to what another writer left (`applied[0]`), or why not."""
    plan = applied[0]
    fresh = _plan_data(plan.path, plan.shown_path, list(plan.edits), current)
    if isinstance(fresh, ToolResult):
        return guard.NO_LONGER_APPLIES
    applied[0] = fresh
    return fresh.data


def _header(template: str, plan: _EditPlan) -> str:
    return template.format(
        path=plan.shown_path,
        edits=plural(plan.edit_count, "edit"),
        added=plan.diff.added,
        removed=plan.diff.removed,
        first=plan.diff.first_changed_line,
    )


def _is_dry_run(args: dict[str, Any]) -> bool:
    try:
        return boolean_field(argument_map(args), NAME, "dry_run")
    except ArgumentProblem:
        return False


def _parse(args: object) -> tuple[str, list[_Edit], bool]:
    """The path, the edits and dry_run, accepting a model's usual slips: `edits` sent as a
    JSON string or as one object, or a single `old`/`new` pair given at the top level."""
    args = argument_map(args)
    raw_path = string_field(args, NAME, "path")
    dry_run = boolean_field(args, NAME, "dry_run")
    edits: Any = args.get("edits")
    if edits is None and "old" in args:
        edits = [{"old": args.get("old"), "new": args.get("new")}]
    if isinstance(edits, str):
        try:
            edits = json.loads(edits)
        except ValueError:
            raise ArgumentProblem(EDITS_FIELD) from None
    if isinstance(edits, dict):
        edits = [edits]
    if not isinstance(edits, list) or not edits:
        raise ArgumentProblem(EDITS_FIELD)
    parsed: list[_Edit] = []
    for number, edit in enumerate(edits, start=1):
        if not isinstance(edit, dict):
            raise ArgumentProblem(EDITS_FIELD)
        for field, hint in (("old", ""), ("new", '; "" deletes old')):
            if not isinstance(edit.get(field), str):
                raise ArgumentProblem(EDIT_FIELD.format(number=number, field=field, hint=hint))
        parsed.append(_Edit(number, edit["old"], edit["new"]))
    return raw_path, parsed, dry_run


def _plan(args: dict[str, Any], ctx: ToolContext) -> _EditPlan | ToolResult:
    """Resolve every edit against the file on disk; a ToolResult when the batch is refused.

    Kept for the call (`ctx.memo`): the file is read once, and again only when its stamp
    changed (then the question is asked again with the new diff)."""
    try:
        raw_path, edits, dry_run = _parse(args)
        path = resolve_path(ctx.cwd, raw_path)
    except ArgumentProblem as problem:
        return ToolResult(str(problem), ToolStatus.FAILED)
    basis = stamp(path)
    cached = ctx.memo.get(NAME)
    if isinstance(cached, tuple) and cached[:3] == (args, path, basis):
        return cached[3]
    result = _fresh_plan(path, clean_path_text(raw_path), edits, dry_run, basis)
    ctx.memo[NAME] = (args, path, basis, result)
    return result


def _fresh_plan(
    path: Path, shown_path: str, edits: list[_Edit], dry_run: bool, basis: str
) -> _EditPlan | ToolResult:
    try:
        data = read_regular(path)
    except NotRegularFile as error:
        return ToolResult(NOT_REGULAR.format(path=shown_path, kind=error.kind), ToolStatus.FAILED)
    except FileTooLarge:
        limit = MAX_EDIT_BYTES >> 20
        return ToolResult(TOO_LARGE.format(path=shown_path, limit=limit), ToolStatus.FAILED)
    except FileNotFoundError:
        return ToolResult(MISSING_FILE.format(path=shown_path), ToolStatus.FAILED)
    except IsADirectoryError:
        return ToolResult(IS_DIRECTORY.format(path=shown_path), ToolStatus.FAILED)
    except OSError as error:
        reason = error.strerror or str(error)
        return ToolResult(CANNOT_READ.format(path=shown_path, reason=reason), ToolStatus.FAILED)
    if looks_binary(data):
        return ToolResult(BINARY_FILE.format(path=shown_path), ToolStatus.FAILED)
    return _plan_data(path, shown_path, edits, data, dry_run, basis)


def _plan_data(
    path: Path,
    shown_path: str,
    edits: list[_Edit],
    data: bytes,
    dry_run: bool = False,
    basis: str = "",
) -> _EditPlan | ToolResult:
    """The plan for `edits` on `data` (the file's content, read now or at write time)."""
    text = decode_file_text(data)
    located: list[tuple[Replacement, _Edit]] = []
    refusals: list[tuple[int, str]] = []
    for edit in edits:
        found = _locate(text, edit, shown_path)
        if isinstance(found, str):
            refusals.append((edit.number, found))
        else:
            located.append((found, edit))
    refusals += _conflicts(text, located)
    if refusals:
        return ToolResult(_refusal(shown_path, refusals, len(edits)), ToolStatus.FAILED)
    replacements = sorted((replacement for replacement, _ in located), key=lambda r: r.start)
    diff = diff_replacements(text, replacements, shown_path)
    if diff.is_empty:
        return ToolResult(NO_CHANGE.format(path=shown_path))
    new_data = encode_file_text(apply_replacements(text, replacements))
    return _EditPlan(
        path,
        shown_path,
        new_data,
        diff,
        len(edits),
        dry_run,
        basis,
        guard.see(path, data),
        tuple(edits),
    )


def _locate(text: str, edit: _Edit, shown_path: str) -> Replacement | str:
    """The edit's span in `text`, or the reason it is refused."""
    if not edit.old:
        return EMPTY_OLD
    old, new = edit.old, edit.new
    positions = diffs.find_all(text, old, _FIND_CAP)
    if not positions and "\n" in old and "\r" not in old and "\r\n" in text:
        crlf_old = old.replace("\n", "\r\n")
        positions = diffs.find_all(text, crlf_old, _FIND_CAP)
        if positions:  # a CRLF file: the model wrote LF
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
    if len(positions) == 1:
        return Replacement(positions[0], positions[0] + len(old), new)
    if not positions:
        return explain_missing(text, edit.old, shown_path)
    count = len(positions) if len(positions) < _FIND_CAP else max(text.count(old), _FIND_CAP)
    lines = [text.count("\n", 0, position) + 1 for position in positions[:LISTED_LINES]]
    listed = ", ".join(str(line) for line in lines) + (", …" if count > LISTED_LINES else "")
    return AMBIGUOUS.format(count=count, lines=listed)


def _conflicts(text: str, located: list[tuple[Replacement, _Edit]]) -> list[tuple[int, str]]:
    """Edits that overlap, nest in or repeat an earlier one (in file order)."""
    ordered = sorted(located, key=lambda item: (item[0].start, -item[0].end, item[1].number))
    refusals: list[tuple[int, str]] = []
    for index, (span, edit) in enumerate(ordered):
        for earlier_span, earlier in ordered[:index]:
            if span.start >= earlier_span.end:
                continue
            if (span.start, span.end) == (earlier_span.start, earlier_span.end):
                first, second = sorted((earlier.number, edit.number))
                refusals.append((second, REPEATS.format(other=first)))
            elif span.end <= earlier_span.end:
                refusals.append((edit.number, NESTED.format(other=earlier.number)))
            else:
                line = text.count("\n", 0, span.start) + 1
                refusals.append((edit.number, OVERLAPS.format(other=earlier.number, line=line)))
            break
    return sorted(refusals)


def _refusal(shown_path: str, refusals: list[tuple[int, str]], edit_count: int) -> str:
    """One header line, then one line per refused edit (numbered when there are several)."""
    if edit_count == 1:
        return "\n".join(
            [REFUSED_HEADER.format(path=shown_path, what="the edit was refused")]
            + [reason for _, reason in refusals]
        )
    what = f"{len(refusals)} of {edit_count} edits were refused"
    lines = [REFUSED_HEADER.format(path=shown_path, what=what)]
    lines += [f"edit {number}: {reason}" for number, reason in refusals]
    return "\n".join(lines)
