"""What the session keeps of one tool call beside its message: the row as it ended.

The model's messages hold the call and its output; the window also wants the row's title,
status, duration and diff, and — for a weak model's call recovered by the repair ladder —
the badge naming the step and the raw text it was parsed from. One frozen record carries
them; the session writer stores it under `tool_meta[call_id]` and replay reads it back, so
the JSON keys are spelled here only.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.events import ToolKind, ToolStatus

log = logging.getLogger(__name__)

#: Files written before `kind` was recorded: the built-in tools' kinds, by name, so an old
#: session replays with the same counters as it showed live (SPEC §7).
KIND_OF_BUILTIN_TOOL: dict[str, ToolKind] = {
    "bash": ToolKind.COMMAND,
    "read_file": ToolKind.FILE,
    "write_file": ToolKind.FILE,
    "edit_file": ToolKind.FILE,
    "read_skill": ToolKind.SKILL,
    "lsp": ToolKind.LSP,
}


@dataclass(frozen=True)
class ToolRecord:
    """One tool call's row: `badge` is "" for a native call (then `raw` is "" too)."""

    title: str
    status: ToolStatus
    duration: float
    diff: str | None = None
    badge: str = ""
    raw: str = ""
    #: The summary counter the call counted in; None when it did not run (unknown tool,
    #: arguments that are not JSON) or for files written before kinds were recorded.
    kind: ToolKind | None = None

    def to_json(self) -> dict[str, Any]:
        """The session file's shape: title, status, duration, diff; badge and raw when
        repaired; kind when counted."""
        data: dict[str, Any] = {
            "title": self.title,
            "status": self.status.value,
            "duration": round(self.duration, 3),
            "diff": self.diff,
        }
        if self.badge:
            data |= {"badge": self.badge, "raw": self.raw}
        if self.kind is not None:
            data["kind"] = self.kind.value
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | Any) -> ToolRecord:
        """Read a record leniently: a missing or unknown field takes its default, so a file
        from any earlier version (or edited by hand) still loads."""
        if not isinstance(data, Mapping):
            data = {}
        try:
            status = ToolStatus(data.get("status") or ToolStatus.DONE.value)
        except ValueError:
            log.debug("unknown tool status %r in a session file", data.get("status"))
            status = ToolStatus.DONE
        try:
            duration = float(data.get("duration") or 0.0)
        except (TypeError, ValueError):
            duration = 0.0
        kind: ToolKind | None
        try:
            kind = ToolKind(data["kind"]) if data.get("kind") else None
        except ValueError:
            kind = None
        diff = data.get("diff")
        return cls(
            title=str(data.get("title") or ""),
            status=status,
            duration=duration,
            diff=str(diff) if diff else None,
            badge=str(data.get("badge") or ""),
            raw=str(data.get("raw") or ""),
            kind=kind,
        )

    def counted_kind(self, name: str) -> ToolKind | None:
        """The counter this call counts in; for an old record, the built-in tool's kind."""
        if self.kind is not None:
            return self.kind
        return KIND_OF_BUILTIN_TOOL.get(name)
