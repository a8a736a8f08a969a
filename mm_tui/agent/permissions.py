"""The permission gate (SPEC §7): bash, write_file, edit_file and lsp rename wait for the person
under `permissions: ask`, unless `yolo` or a grant "for this session" (key s) says otherwise.

The question travels as a PermissionRequest event carrying a Future; the sink (window, headless
printer, test) resolves it. The worker waits in short slices so that an interrupt is noticed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Literal

from mm_tui.agent.events import EventSink, PermissionAnswer, PermissionRequest, PermissionResolved
from mm_tui.agent.tools.base import ToolPreview


@dataclass
class PermissionGate:
    """Settings are read by the worker and changed by the window: both go through `lock`."""

    permissions: Literal["ask", "allow"] = "ask"
    yolo: bool = False
    grants: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

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
        """Drop these grants (all when None); the ones that were held, sorted."""
        with self.lock:
            wanted = set(self.grants) if names is None else set(names)
            revoked = sorted(wanted & self.grants)
            self.grants -= wanted
        return revoked

    def snapshot(self) -> tuple[Literal["ask", "allow"], bool, frozenset[str]]:
        with self.lock:
            return self.permissions, self.yolo, frozenset(self.grants)

    def _granted(self, tool: str) -> bool:
        with self.lock:
            return tool in self.grants

    def _grant(self, tool: str) -> None:
        with self.lock:
            self.grants.add(tool)

    def decide(
        self,
        call_id: str,
        tool: str,
        preview: ToolPreview,
        sink: EventSink,
        cancel: threading.Event,
    ) -> PermissionAnswer | None:
        """Allow, allow for the session, or reject; None when interrupted while waiting."""
        if not self.asks:
            return PermissionAnswer.ALLOW_ONCE
        if self._granted(tool):
            sink(PermissionResolved(call_id, PermissionAnswer.ALLOW_SESSION, automatic=True))
            return PermissionAnswer.ALLOW_SESSION
        future: Future[PermissionAnswer] = Future()
        sink(
            PermissionRequest(
                call_id=call_id,
                name=tool,
                title=preview.title,
                detail=preview.detail,
                diff=preview.diff,
                future=future,
            )
        )
        while True:
            try:
                answer = PermissionAnswer(future.result(timeout=0.05))
                break
            except FutureTimeout:
                if cancel.is_set():
                    future.cancel()
                    return None
        if answer is PermissionAnswer.ALLOW_SESSION:
            self._grant(tool)
        sink(PermissionResolved(call_id, answer))
        return answer
