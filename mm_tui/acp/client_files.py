"""The editor's buffers, lent to the file tools when the client offers `fs/read_text_file`
and `fs/write_text_file` (docs/decisions/0010-acp-client-fs-and-terminal.md).

The tools call from the core's worker thread; each call is one request on the connection's
event loop, waited for with a bound, its failure an OSError the tool says in one line. The
last text read or written of each file is kept, so the permission question and the finished
call show the change to the very text the tool planned on, not the disk's older copy.
"""

from __future__ import annotations

import errno
import logging
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

from mm_tui.acp.client_terminals import said
from mm_tui.acp.session import SessionBridge
from mm_tui.agent.tools.paths import is_inside

log = logging.getLogger(__name__)
T = TypeVar("T")

#: How long a tool waits for the editor to read or write one file.
REQUEST_SECONDS = 30.0
#: Past this many files, the texts kept for the updates start over (a long session).
KEPT_FILES = 64


class ClientFiles:
    """`EditorFiles` over ACP: the project's files as the editor holds them."""

    def __init__(self, bridge: SessionBridge, root: Path) -> None:
        self.bridge = bridge
        self.root = root
        self._known: dict[Path, str] = {}
        self._lock = threading.Lock()

    def holds(self, path: Path) -> bool:
        return is_inside(path, self.root)

    def read_text(self, path: Path) -> str:
        client, session_id = self.bridge.client, self.bridge.session_id
        response = self._ask(
            "read", lambda: client.read_text_file(session_id=session_id, path=str(path))
        )
        self._keep(path, response.content)
        return response.content

    def write_text(self, path: Path, text: str) -> None:
        client, session_id = self.bridge.client, self.bridge.session_id
        self._ask(
            "write",
            lambda: client.write_text_file(session_id=session_id, path=str(path), content=text),
        )
        self._keep(path, text)

    def known_text(self, path: Path) -> str | None:
        """The text last read from or written to the editor for `path`, if any."""
        with self._lock:
            return self._known.get(path)

    def _keep(self, path: Path, text: str) -> None:
        with self._lock:
            if len(self._known) >= KEPT_FILES and path not in self._known:
                self._known.clear()
            self._known[path] = text

    def _ask(self, what: str, request: Callable[[], Awaitable[T]]) -> T:
        try:
            return self.bridge.call(request, REQUEST_SECONDS)
        except TimeoutError:
            log.debug("fs/%s_text_file unanswered", what, exc_info=True)
            raise OSError(errno.ETIMEDOUT, f"no answer within {REQUEST_SECONDS:g}s") from None
        except Exception as error:  # a JSON-RPC error or a closed connection: one line
            log.debug("fs/%s_text_file failed", what, exc_info=True)
            raise OSError(errno.EIO, said(error)) from None
