"""The permission gate (SPEC §7): what runs is what the person approved (see
docs/decisions/0006-permission-question.md).

bash, write_file, edit_file and lsp rename wait for the person under `permissions: ask`
(reading outside the project too), unless `yolo`, a rule of the config or a grant "for this
session" (key s) says otherwise. Deny rules win over everything, yolo included; ask rules
ask even where a grant or an allow rule would not. A grant covers what the person saw:
`s` on `git status` allows `git status …` (it only reads), on `python3 --version` exactly that
command, on an edit of `src/a.py` edits in `src/`. A command that cannot be read through
(`eval "$x"`) while a deny rule exists is asked even under yolo.

The question travels as a PermissionRequest event carrying a Future; the sink (window,
headless printer, test) resolves it with an answer, or a `PermissionReply` that carries the
person's reason for a rejection. The worker waits in short slices so that an interrupt is
noticed. When the file a write or an edit would change is not what the question showed by
the time the answer comes, the question is asked again with the new diff.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mm_tui.agent.config import Config
from mm_tui.agent.events import (
    EventSink,
    PermissionAnswer,
    PermissionReply,
    PermissionRequest,
    PermissionResolved,
    ToolStatus,
)
from mm_tui.agent.rules import Effect, Rule, RuleSet, Subject
from mm_tui.agent.tools.base import INTERRUPTED, Tool, ToolContext, ToolPreview

#: Times a question is asked again because the file changed under it before we give up.
MAX_REASKS = 3
CHANGED_UNDER_US = (
    "[error: {tool} not run: the file kept changing while you were asked; nothing was written]"
)
DENIED_BY_RULE = "{rejection} (denied by the rule {rule} of the config)"
REASON_GIVEN = "{rejection}\nThe user says: {reason}"


def rejection_of(tool: Tool) -> str:
    """What the model reads when the person rejects a call of `tool` (SPEC §4's texts)."""
    return tool.rejection_text or f"[{tool.name} call rejected by the user]"


@dataclass(frozen=True)
class GateOutcome:
    """`run`: go ahead; else `output` and `status` are the call's result."""

    run: bool
    output: str = ""
    status: ToolStatus = ToolStatus.REJECTED


_RUN = GateOutcome(True)


@dataclass
class PermissionGate:
    """Settings are read by the worker and changed by the window: both go through `lock`."""

    permissions: Literal["ask", "allow"] = "ask"
    yolo: bool = False
    rules: RuleSet = field(default_factory=RuleSet)
    root: Path = field(default_factory=Path.cwd)
    _grants: dict[str, Rule] = field(default_factory=dict, repr=False)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def from_config(cls, config: Config, root: Path) -> PermissionGate:
        """The gate for a session: the config's mode, yolo and rules, the project root."""
        rules = RuleSet.parse(config.allow_rules, config.ask_rules, config.deny_rules)
        return cls(config.permissions, config.yolo, rules, root)

    @property
    def grants(self) -> set[str]:
        """The session's grants as written (`bash(git status *)`, `write_file(src/*)`)."""
        with self.lock:
            return set(self._grants)

    @property
    def asks(self) -> bool:
        with self.lock:
            return self.permissions == "ask" and not self.yolo

    def set_permissions(self, mode: Literal["ask", "allow"]) -> None:
        if mode not in ("ask", "allow"):
            raise ValueError(f"permissions must be ask or allow, not {mode!r}")
        with self.lock:
            self.permissions = mode

    def set_yolo(self, on: bool) -> None:
        with self.lock:
            self.yolo = on

    def revoke(self, names: Iterable[str] | None = None) -> list[str]:
        """Drop these grants (all when None; a tool's name drops all its grants); the ones
        that were held, sorted."""
        with self.lock:
            wanted = set(self._grants) if names is None else set(names)
            revoked = sorted(
                text for text, rule in self._grants.items() if text in wanted or rule.tool in wanted
            )
            for name in revoked:
                del self._grants[name]
        return revoked

    def snapshot(self) -> tuple[Literal["ask", "allow"], bool, frozenset[str]]:
        with self.lock:
            return self.permissions, self.yolo, frozenset(self._grants)

    def grant(self, rule: Rule) -> None:
        with self.lock:
            self._grants[rule.text] = rule

    def review(
        self,
        call_id: str,
        tool: Tool,
        args: dict[str, Any],
        ctx: ToolContext,
        sink: EventSink,
        on_wait: Callable[[], None] = lambda: None,
    ) -> GateOutcome:
        """Decide whether this call runs: rules, mode, grants, and if need be the person."""
        subject = tool.subject(args, ctx) or Subject(tool.name)  # None: tool-wide rules only
        with self.lock:
            mode, yolo, grants = self.permissions, self.yolo, list(self._grants.values())
        verdict = self.rules.verdict(subject, self.root, grants)
        effect = verdict[0] if verdict else None
        if verdict is not None and effect is Effect.DENY:
            text = DENIED_BY_RULE.format(rejection=rejection_of(tool), rule=verdict[1].text)
            sink(PermissionResolved(call_id, PermissionAnswer.REJECT, automatic=True))
            return GateOutcome(False, text)
        if effect is Effect.UNSURE:  # a deny rule may apply: the person decides, yolo or not
            return self._ask(call_id, tool, args, ctx, sink, on_wait)
        if yolo:
            return _RUN
        if effect is not Effect.ASK:
            if not tool.needs_permission(args, ctx) or mode == "allow":
                return _RUN
            if effect is Effect.ALLOW:
                sink(PermissionResolved(call_id, PermissionAnswer.ALLOW_SESSION, automatic=True))
                return _RUN
        return self._ask(call_id, tool, args, ctx, sink, on_wait)

    def _ask(
        self,
        call_id: str,
        tool: Tool,
        args: dict[str, Any],
        ctx: ToolContext,
        sink: EventSink,
        on_wait: Callable[[], None],
    ) -> GateOutcome:
        preview = tool.preview(args, ctx)
        for _ in range(MAX_REASKS + 1):
            on_wait()
            reply = self._question(call_id, tool, args, ctx, preview, sink)
            if reply is None:
                return GateOutcome(False, INTERRUPTED, ToolStatus.INTERRUPTED)
            if reply.answer is PermissionAnswer.REJECT:
                sink(PermissionResolved(call_id, reply.answer))
                rejection = rejection_of(tool)
                if reply.reason.strip():
                    rejection = REASON_GIVEN.format(rejection=rejection, reason=reply.reason)
                return GateOutcome(False, rejection)
            now = tool.preview(args, ctx)
            if now.basis == preview.basis:  # what was approved is what will be written
                if reply.answer is PermissionAnswer.ALLOW_SESSION:
                    self.grant(tool.grant(args, ctx))
                sink(PermissionResolved(call_id, reply.answer))
                return _RUN
            preview = now  # the file changed while the person read: ask again, new diff
        return GateOutcome(False, CHANGED_UNDER_US.format(tool=tool.name), ToolStatus.FAILED)

    def _question(
        self,
        call_id: str,
        tool: Tool,
        args: dict[str, Any],
        ctx: ToolContext,
        preview: ToolPreview,
        sink: EventSink,
    ) -> PermissionReply | None:
        future: Future[PermissionAnswer | PermissionReply] = Future()
        sink(
            PermissionRequest(
                call_id=call_id,
                name=tool.name,
                title=preview.title,
                detail=preview.detail,
                diff=preview.diff,
                future=future,
                grant=tool.grant(args, ctx).described,
                location=preview.location,
            )
        )
        while True:
            try:
                result = future.result(timeout=0.05)
            except FutureTimeout:
                if ctx.cancel.is_set():
                    future.cancel()
                    return None
                continue
            if isinstance(result, PermissionReply):
                return result
            return PermissionReply(PermissionAnswer(result))
