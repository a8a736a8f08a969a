"""The permission gate (SPEC §7): bash, write_file, edit_file and lsp rename wait for the person
under `permissions: ask`, unless `yolo` or a grant "for this session" (key s) says otherwise.

The question travels as a PermissionRequest event carrying a Future; the sink (window, headless
printer, test) resolves it. The worker waits in short slices so that an interrupt is noticed.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Literal

from mm_tui.agent.events import EventSink, PermissionAnswer, PermissionRequest, PermissionResolved
from mm_tui.agent.tools.base import ToolPreview


@dataclass
class PermissionGate:
    permissions: Literal["ask", "allow"] = "ask"
    yolo: bool = False
    grants: set[str] = field(default_factory=set)

    @property
    def asks(self) -> bool:
        return self.permissions == "ask" and not self.yolo

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
        if tool in self.grants:
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
            self.grants.add(tool)
        sink(PermissionResolved(call_id, answer))
        return answer
