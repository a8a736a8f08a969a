"""The settings intents of the window's turn controller: yolo, permissions, grants, model.

A base of `TurnController` (kept apart so that each module holds one job): these intents
change the core's settings through the port, each outcome said in one notice line; listing
and switching models are blocking calls, run in thread workers that report through the sink.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from mm_tui.agent.events import Notice
from mm_tui.agent.port import AgentPort, PermissionMode, PermissionState
from mm_tui.window.event_bridge import ModelsListed, TopLineChanged, WindowEvent
from mm_tui.window.turn_surface import TurnSurface

log = logging.getLogger(__name__)

YOLO_ON = "yolo on: tools run without asking"
YOLO_OFF = "yolo off: bash, edits and renames ask again"
MODEL_SET = "model: {model}"
MODEL_UNKNOWN = "/model: the server has no model {model} — it has: {names}"


def model_unknown(name: str, models: Sequence[str], current: str) -> str:
    """The refusal of an unknown model, the server's list with the current one marked."""
    names = ", ".join(f"{m} (current)" if m == current else m for m in models)
    return MODEL_UNKNOWN.format(model=name, names=names)


class SettingsIntents:
    """`/yolo`, `/permissions`, `/model`: what the controller does with the core's settings."""

    def __init__(self, surface: TurnSurface, sink: Callable[[WindowEvent], None]) -> None:
        self.surface = surface
        self.sink = sink
        self.port: AgentPort | None = None

    def _port_for(self, command: str, *, idle: bool = False) -> AgentPort | None:
        raise NotImplementedError

    def refresh_top_line(self) -> None:
        raise NotImplementedError

    def toggle_yolo(self) -> None:
        """`/yolo`: tools run without asking, or ask again."""
        port = self._port_for("/yolo")
        if port is None:
            return
        on = not port.permission_state().yolo
        port.set_yolo(on)
        self.surface.say("warning" if on else "info", YOLO_ON if on else YOLO_OFF)
        self.refresh_top_line()

    def permission_state(self, command: str) -> PermissionState | None:
        """The gate's state for `command`, or None after saying why it cannot run."""
        port = self._port_for(command)
        return None if port is None else port.permission_state()

    def set_permissions(self, mode: PermissionMode) -> None:
        """`/permissions ask|allow`."""
        port = self._port_for("/permissions")
        if port is None:
            return
        port.set_permissions(mode)
        self.surface.say("info", f"permissions: {mode}")

    def revoke(self, tool: str) -> None:
        """`/permissions revoke [tool]`: one grant, or all of them when no tool is named."""
        port = self._port_for("/permissions")
        if port is None:
            return
        names = [tool] if tool else sorted(port.permission_state().grants)
        port.revoke_grants(names)
        self.surface.say("info", f"revoked: {', '.join(names) or 'nothing to revoke'}")

    def revoke_chosen(self, names: Iterable[str]) -> None:
        """The grants revoked on the `/permissions` screen, each said on its line."""
        port = self.port
        if port is None:
            return
        for name in port.revoke_grants(names):
            self.surface.say("info", f"revoked: {name} asks again")

    def model(self, name: str) -> None:
        """`/model name` switches at once; `/model` lists the models for a picker."""
        port = self._port_for("/model", idle=True)
        if port is None:
            return
        if name:
            self._switch_model(port, name)
        else:
            self.surface.run_in_thread(lambda: self._list_models(port))

    def choose_model(self, name: str | None) -> None:
        """The picker's answer (None: cancelled)."""
        if name and self.port is not None:
            self._switch_model(self.port, name)

    def _switch_model(self, port: AgentPort, name: str) -> None:
        self.surface.run_in_thread(lambda: self._set_model(port, name))

    def _set_model(self, port: AgentPort, name: str) -> None:
        try:
            models = port.list_models()  # `/model NAME` is checked against the server's list
            if models and name not in models:
                self.sink(Notice("warning", model_unknown(name, models, port.top_line().model)))
                return
            port.set_model(name)
        except Exception as error:
            log.exception("/model %s failed", name)
            self.sink(Notice("error", f"/model failed: {error}"))
            return
        self.sink(TopLineChanged())
        self.sink(Notice("info", MODEL_SET.format(model=name)))

    def _list_models(self, port: AgentPort) -> None:
        try:
            models = port.list_models()
        except Exception as error:
            log.exception("listing the models failed")
            self.sink(Notice("error", f"/model: could not list the models: {error}"))
            return
        self.sink(ModelsListed(tuple(models), port.top_line().model))
