"""The permission questions waiting for the person, oldest first, and how one is answered."""

from __future__ import annotations

import logging
from concurrent.futures import InvalidStateError

from mm_tui.agent.events import PermissionAnswer, PermissionReply, PermissionRequest

log = logging.getLogger(__name__)


class OpenQuestions(dict[str, PermissionRequest]):
    """The open questions by call id, in the order they were asked."""

    def answer(
        self, key: str, reason: str = "", call_id: str | None = None
    ) -> tuple[str, PermissionAnswer] | None:
        """a / s / r: answer the question of `call_id` (the one the person answered; by default
        the oldest open one); (its call id, the answer), or None when it is no longer open.
        A rejection's `reason` (typed in the question) goes to the model."""
        if call_id is None:
            call_id = next(iter(self), None)
        request = self.pop(call_id, None) if call_id is not None else None
        if call_id is None or request is None:
            return None
        answer = PermissionAnswer(key)
        try:
            if not request.future.done():
                request.future.set_result(PermissionReply(answer, reason) if reason else answer)
        except InvalidStateError:  # the worker gave up on it (interrupted) meanwhile
            log.debug("question %s was already settled", call_id, exc_info=True)
        return call_id, answer
