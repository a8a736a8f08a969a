"""What real servers ask of a client, and what they tell it unasked (SPEC §6).

A server that asks `workspace/configuration` or `window/workDoneProgress/create` and gets no
answer may wait forever before answering us; so every request a server is known to send is
answered, plainly. Notifications feed the connection: pushed diagnostics, progress, logs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from mm_tui.lsp.server_state import ServerState
from mm_tui.lsp.spec import LspServerSpec


def settings_section(settings: dict[str, Any] | None, section: str | None) -> Any:
    """The value at a dotted `section` of the server's settings (all of them without one)."""
    if not section:
        return settings
    value: Any = settings
    for part in section.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


class ServerListener(Protocol):
    """What the handlers feed: the server's connection (a Protocol: no import cycle)."""

    @property
    def spec(self) -> LspServerSpec: ...

    @property
    def root(self) -> Path: ...

    @property
    def state(self) -> ServerState: ...


class ServerRequestHandlers:
    """The client's side of the conversation, bound to one connection."""

    def __init__(self, connection: ServerListener) -> None:
        self._connection = connection

    def handlers(self) -> dict[str, Callable[[Any], Any]]:
        """Each method a server sends, and what handles it (its return value answers)."""
        return {
            "workspace/configuration": self.configuration,
            "client/registerCapability": self.register_capability,
            "client/unregisterCapability": self.unregister_capability,
            "window/workDoneProgress/create": self.progress_create,
            "window/showMessageRequest": self.show_message_request,
            "window/showDocument": self.show_document,
            "workspace/workspaceFolders": self.workspace_folders,
            "workspace/applyEdit": self.apply_edit,
            "workspace/diagnostic/refresh": self.nothing,
            "workspace/semanticTokens/refresh": self.nothing,
            "workspace/inlayHint/refresh": self.nothing,
            "workspace/codeLens/refresh": self.nothing,
            "textDocument/publishDiagnostics": self.publish_diagnostics,
            "$/progress": self.progress,
            "window/logMessage": self.log_message,
            "window/showMessage": self.log_message,
            "telemetry/event": self.nothing,
            "$/logTrace": self.nothing,
        }

    # ---- requests --------------------------------------------------------------------------

    def configuration(self, params: Any) -> list[Any]:
        """One entry per item asked, from the server's `settings` (None when absent)."""
        items = params.get("items") if isinstance(params, dict) else None
        settings = self._connection.spec.settings
        return [
            settings_section(settings, item.get("section") if isinstance(item, dict) else None)
            for item in (items if isinstance(items, list) else [])
        ]

    def register_capability(self, params: Any) -> None:
        for registration in _list(params, "registrations"):
            method = registration.get("method")
            if isinstance(method, str):
                key = _key(registration, method)
                self._connection.state.register(key, method, registration.get("registerOptions"))

    def unregister_capability(self, params: Any) -> None:
        # The protocol misspells this field "unregisterations"; accept both spellings.
        for field in ("unregisterations", "unregistrations"):
            for registration in _list(params, field):
                method = registration.get("method")
                if isinstance(method, str):
                    self._connection.state.unregister(_key(registration, method), method)

    def progress_create(self, params: Any) -> None:
        self._connection.state.progress_created = True

    def show_message_request(self, params: Any) -> None:
        """No person is there to pick an action: keep the message, choose none."""
        self.log_message(params)
        return None

    def show_document(self, params: Any) -> dict[str, bool]:
        return {"success": False}

    def workspace_folders(self, params: Any) -> list[dict[str, str]]:
        root = self._connection.root
        return [{"uri": root.as_uri(), "name": root.name}]

    def apply_edit(self, params: Any) -> dict[str, Any]:
        """Edits arrive only through the rename action, which asks the person first."""
        return {"applied": False, "failureReason": "mm-tui applies edits only through rename"}

    def nothing(self, params: Any) -> None:
        return None

    # ---- notifications ---------------------------------------------------------------------

    def publish_diagnostics(self, params: Any) -> None:
        if isinstance(params, dict):
            self._connection.state.record_publication(params)

    def progress(self, params: Any) -> None:
        if isinstance(params, dict):
            self._connection.state.record_progress(params)

    def log_message(self, params: Any) -> None:
        if isinstance(params, dict) and isinstance(params.get("message"), str):
            self._connection.state.record_log(params["message"])
            if params.get("type") == _ERROR:  # its own words, for the model (server_state.py)
                self._connection.state.record_error(params["message"])


_ERROR = 1  # MessageType.Error, of window/showMessage and window/logMessage


def _list(params: Any, field: str) -> list[dict[str, Any]]:
    value = params.get(field) if isinstance(params, dict) else None
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _key(registration: dict[str, Any], method: str) -> str:
    """A registration's id (a string; a number is taken as its text, so two registrations
    numbered 1 and 2 stay apart); the method when it has none (it is required: lenient)."""
    ident = registration.get("id")
    if isinstance(ident, int) and not isinstance(ident, bool):
        return str(ident)
    return ident if isinstance(ident, str) else method
