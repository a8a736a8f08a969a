"""Small choice screens: `/model` (pick a model) and `/permissions` (the config's rules, the
session's grants, and revoking grants). Names come from the server or from files: every one is
drawn through the sanitizer (`support.terminal_text`)."""

from __future__ import annotations

from collections.abc import Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mm_tui.agent.port import ConfigRule
from mm_tui.support.terminal_text import quoted, visible
from mm_tui.widgets.picker_look import picker_look

NO_GRANTS = "No tool is allowed for the session (answer s to a question to allow one)."
NO_RULES = "No rules in the config (permissions: {allow: [...], ask: [...], deny: [...]})."
RULES_FROM = "Rules from {origin} (deny wins, then ask, then allow):"
GRANTS_HEADER = "Session grants — Enter revokes the highlighted one, Esc closes:"


def rules_text(rules: Sequence[ConfigRule]) -> Content:
    """The config's rules, one a line under the file they come from, every hiding character
    escaped (a rule is text from a file someone else may have written)."""
    if not rules:
        return Content.styled(NO_RULES, "dim")
    lines: list[Content] = []
    origin = None
    for rule in rules:
        if rule.origin != origin:
            origin = rule.origin
            lines.append(Content.styled(RULES_FROM.format(origin=visible(origin)), "bold"))
        style = {"deny": "bold $error", "ask": "bold $warning"}.get(rule.effect, "bold $success")
        lines.append(Content.assemble("  ", (f"{rule.effect:<5}", style), " ", visible(rule.text)))
    return Content("\n").join(lines)


class ModelPicker(ModalScreen[str | None]):
    """The server's models; Enter picks one, Esc keeps the current one."""

    DEFAULT_CSS = picker_look("ModelPicker")

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="picker.cancel")]

    def __init__(self, models: list[str], current: str) -> None:
        super().__init__()
        self.models = models
        self.current = current

    def compose(self) -> ComposeResult:
        options = [
            Option(Content(quoted(name) + ("  (current)" if name == self.current else "")), id=name)
            for name in self.models
        ]
        with Vertical(classes="picker"):
            yield Static(Content.styled("Pick a model (Enter), Esc to cancel", "bold"))
            yield OptionList(*options, id="models")

    def on_mount(self) -> None:
        option_list = self.query_one(OptionList)
        if self.current in self.models:
            option_list.highlighted = self.models.index(self.current)

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_cancel(self) -> None:
        """Keep the current model."""
        self.dismiss(None)


class GrantsScreen(ModalScreen[set[str]]):
    """The mode, yolo, and the tools allowed for the session; Enter revokes a grant."""

    DEFAULT_CSS = picker_look("GrantsScreen")

    BINDINGS = [Binding("escape,q", "close", "Close", id="grants.close")]

    def __init__(
        self,
        grants: set[str],
        *,
        permissions: str,
        yolo: bool,
        rules: Sequence[ConfigRule] = (),
    ) -> None:
        super().__init__()
        self.grants = set(grants)
        self.revoked: set[str] = set()
        self.permissions = permissions
        self.yolo = yolo
        self.rules = tuple(rules)

    def compose(self) -> ComposeResult:
        mode = f"permissions: {self.permissions} · yolo: {'on' if self.yolo else 'off'}"
        with Vertical(classes="picker"):
            yield Static(Content.styled(mode, "bold"))
            yield Static(rules_text(self.rules), id="rules")
            yield Static(Content.styled(GRANTS_HEADER, "dim"))
            yield OptionList(*self._options(), id="grants")

    def _options(self) -> list[Option]:
        if not self.grants:
            return [Option(Content(NO_GRANTS), disabled=True)]
        return [
            Option(Content(f"{visible(name)}  allowed for the session"), id=name)
            for name in sorted(self.grants)
        ]

    @on(OptionList.OptionSelected)
    def _revoke(self, event: OptionList.OptionSelected) -> None:
        name = event.option.id
        if name is None:
            return
        self.grants.discard(name)
        self.revoked.add(name)
        option_list = self.query_one(OptionList)
        option_list.clear_options()
        option_list.add_options(self._options())

    def action_close(self) -> None:
        """Close, handing back the grants that were revoked."""
        self.dismiss(self.revoked)
