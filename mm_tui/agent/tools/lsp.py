"""`lsp`: the model's eyes on code, through the project's language servers (SPEC §4, §6).

One tool with an `action` (a small model reads five tools reliably, eleven less so) and a
`symbol` instead of a column (a small model cannot count characters); see
seeds/lsp-tool-design.fr.md. The client lives in `mm_tui.lsp`; it is imported on the first
call, so declaring the tool costs start-up nothing but a PATH lookup per server. Navigation
never asks; `rename` writes files, so it asks like `edit_file`.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, assert_never

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.arguments import (
    ArgumentProblem,
    argument_map,
    integer_field,
    lenient_integer,
    lenient_string,
    string_field,
)
from mm_tui.agent.tools.base import (
    INTERRUPTED,
    Tool,
    ToolContext,
    ToolKind,
    ToolPreview,
    ToolResult,
    truncate_output,
)
from mm_tui.agent.tools.paths import resolve_path
from mm_tui.lsp.answers import Failed, Interrupted, Text
from mm_tui.lsp.defaults import server_label
from mm_tui.lsp.query import ACTIONS, LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.symbols import clean_symbol, symbol_and_new_name
from mm_tui.lsp.words import rule_for

if TYPE_CHECKING:
    from mm_tui.lsp.workspace import LspWorkspace

NAME = "lsp"
REJECTED = "[rename rejected by the user]"
NOT_FOUND_WARNING = "[warning: lsp server {name} ({command}) not found on the PATH — skipped]"

DESCRIPTION = (
    "Ask the language server about code. Servers available: {servers}.\n"
    "Actions: definition (where symbol is defined), references (every use of symbol, "
    "declaration included), hover (its type and docs), symbols (outline of path), "
    "diagnostics (errors and warnings in path), rename (renames symbol everywhere and writes "
    "the files; needs new_name).\n"
    "Give symbol as written in the code; no column needed. Every place comes back as "
    "path:line:column with its source line.\n"
    "Method: references before changing a shared symbol, diagnostics after editing.\n"
    'Example: {{"action": "references", "path": "{example}", "symbol": "parse_config"}}'
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "path": {"type": "string", "description": "File, relative to the project."},
        "symbol": {
            "type": "string",
            "description": "The identifier as written in the code (definition, references, "
            "hover, rename).",
        },
        "line": {
            "type": "integer",
            "description": "1-based. Optional: only look for symbol on this line.",
        },
        "column": {
            "type": "integer",
            "description": "1-based, in characters. Only needed without symbol.",
        },
        "new_name": {"type": "string", "description": "The new identifier, for rename."},
    },
    "required": ["action", "path"],
}


class LspTool(Tool):
    """The six actions over every configured server found on the PATH."""

    name = NAME
    kind = ToolKind.LSP
    rejection_text = REJECTED

    def __init__(self, specs: Sequence[LspServerSpec], root: Path) -> None:
        self.specs = tuple(specs)
        self.root = root
        self._workspace: LspWorkspace | None = None

    @classmethod
    def create(
        cls, specs: Sequence[LspServerSpec], root: Path, *, user_configured: bool
    ) -> tuple[LspTool | None, list[str]]:
        """The tool over the servers found on the PATH (None when there is none), and the
        warning lines for configured servers that are missing (the built-in defaults, used
        when the configuration has no `lsp` section, are skipped silently: SPEC §6)."""
        found: list[LspServerSpec] = []
        warnings: list[str] = []
        for spec in specs:
            if spec.command and shutil.which(spec.command[0]):
                found.append(spec)
            elif user_configured:
                command = spec.command[0] if spec.command else ""
                warnings.append(NOT_FOUND_WARNING.format(name=spec.name, command=command))
        return (cls(found, root) if found else None), warnings

    @property
    def description(self) -> str:
        servers = ", ".join(server_label(spec) for spec in self.specs)
        extension = self.specs[0].extensions[0] if self.specs[0].extensions else ""
        return DESCRIPTION.format(servers=servers, example=f"src/config{extension}")

    parameters = PARAMETERS

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """Only rename writes files; the five other actions only read (SPEC §4)."""
        return lenient_string(args, "action").strip().lower() == "rename"

    def title(self, args: dict[str, Any]) -> str:
        """`lsp definition main.go greet`, `lsp definition main.go:9:14`,
        `lsp rename main.go greet → hello`."""
        action = lenient_string(args, "action").strip()
        place = lenient_string(args, "path").strip()
        line, column = lenient_integer(args, "line"), lenient_integer(args, "column")
        raw_symbol = lenient_string(args, "symbol")
        rule = rule_for(place)
        if action.lower() == "rename":
            raw_new_name = lenient_string(args, "new_name")
            symbol, new_name = symbol_and_new_name(raw_symbol, raw_new_name, rule)
        else:
            symbol, new_name = clean_symbol(raw_symbol, rule), ""
        if line > 0 and (symbol or column > 0):
            place += f":{line}" if symbol else f":{line}:{column}"
        parts = [NAME, action, place, symbol]
        if new_name:
            parts += ["→", new_name]
        return " ".join(part for part in parts if part)

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        """For a rename, what it would change (the server is asked; nothing is written)."""
        title = self.title(args)
        try:
            query = _query(args, ctx)
        except ArgumentProblem:
            return ToolPreview(title=title, detail=title)
        if query.action.strip().lower() != "rename":
            return ToolPreview(title=title, detail=title)
        # What is shown is what may be written: the run asks the server again and writes
        # only the same diff; the gate asks again when this basis moves.
        match self._workspace_for_calls().preview(query, ctx.cancel):
            case Text(text, diff):
                ctx.memo[NAME] = (args, diff or "")
                return ToolPreview(title=title, detail=text, diff=diff, basis=diff or "")
            case Failed(text):
                ctx.memo[NAME] = (args, "")
                return ToolPreview(title=title, detail=text, basis=text)
            case Interrupted():
                return ToolPreview(title=title, detail=INTERRUPTED)
            case unknown:
                assert_never(unknown)

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            query = _query(args, ctx)
        except ArgumentProblem as problem:
            return ToolResult(str(problem), ToolStatus.FAILED)
        workspace = self._workspace or self._workspace_for_calls()
        shown = ctx.memo.get(NAME) if ctx.memo else None  # the rename preview allowed
        shown_diff = shown[1] if isinstance(shown, tuple) and shown[0] == args else None
        match workspace.execute(query, ctx.cancel, ctx.before_change, shown_diff):
            case Text(text, diff):
                if len(text) > ctx.max_output:
                    text = truncate_output(text, ctx.max_output)
                return ToolResult(text, ToolStatus.DONE, diff)
            case Failed(text):
                return ToolResult(truncate_output(text, ctx.max_output), ToolStatus.FAILED)
            case Interrupted():
                return ToolResult(INTERRUPTED, ToolStatus.INTERRUPTED)  # SPEC §3
            case unknown:
                assert_never(unknown)

    def running_servers(self) -> dict[str, int]:
        """The process id of each server started and still running, by name."""
        return self._workspace.server_pids() if self._workspace is not None else {}

    def close(self) -> None:
        """Stop every server this tool started (shutdown, exit, then the process)."""
        if self._workspace is not None:
            self._workspace.close()

    def _workspace_for_calls(self) -> LspWorkspace:
        if self._workspace is None:
            from mm_tui.lsp.workspace import LspWorkspace  # lsprotocol loads on the first call

            self._workspace = LspWorkspace(self.specs, self.root)
        return self._workspace


def _query(args: dict[str, Any], ctx: ToolContext) -> LspQuery:
    """The call's fields, read as leniently as a small model needs; ArgumentProblem if not."""
    fields = args if type(args) is dict else argument_map(args)
    # Checked by `string_field` (which says what is wrong) only when not plain text, and the
    # optional fields only when given: a warm call is short (bench/bench_lsp.py).
    path, action, symbol = fields.get("path"), fields.get("action"), fields.get("symbol", "")
    if type(path) is not str:
        path = string_field(fields, NAME, "path")
    if type(action) is not str:
        action = string_field(fields, NAME, "action")
    return LspQuery(
        action,
        _absolute(ctx.cwd, path) if path.strip() else "",
        symbol if type(symbol) is str else _text(symbol),
        integer_field(fields, NAME, "line") if "line" in fields else 0,
        integer_field(fields, NAME, "column") if "column" in fields else 0,
        _text(fields["new_name"]) if "new_name" in fields else "",
    )


def _absolute(cwd: Path, raw: str) -> str:
    """`resolve_path`'s answer as text; remembered for a path without `..` or `~`, which it
    reads from the text alone (a warm call must cost little: bench/bench_lsp.py)."""
    if ".." in raw or "~" in raw:
        return str(resolve_path(cwd, raw))
    return _absolute_by_text(cwd, raw)


@functools.lru_cache(maxsize=256)
def _absolute_by_text(cwd: Path, raw: str) -> str:
    return str(resolve_path(cwd, raw))


def _text(value: object) -> str:
    """An optional text field; a number (a model's `"symbol": 42`) is read as its digits."""
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
