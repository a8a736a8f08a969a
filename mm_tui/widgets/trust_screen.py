"""The question at start when a project's files would change how mm-tui works.

A cloned repository's `.mm.yaml` or `AGENTS.md` is not obeyed until the person trusts the
directory. The answer is always deliberate: a list whose highlighted choice is the safe one
(letters typed while the question appears do nothing, and an Enter meant for the prompt
declines), Enter picks; Esc decides nothing and the question comes again at the next start.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from mm_tui.support.terminal_text import visible
from mm_tui.widgets.picker_look import picker_look

if TYPE_CHECKING:
    from mm_tui.agent.trust_question import TrustQuestion

TITLE = "Trust this project?"
EXPLAIN = (
    "Trusting obeys these files as they are now (a change asks again). Your own config and "
    "the command line always apply."
)
DECLINE = "Don't trust: keep these files off (not asked again; `mm-tui trust` later)"
ACCEPT = "Trust this directory as its files are now"
LATER_HINT = "Enter picks · Esc: decide at the next start"


class TrustScreen(ModalScreen[bool | None]):
    """True: trust; False: declined (remembered); None: Esc, nothing decided."""

    DEFAULT_CSS = picker_look("TrustScreen")
    BINDINGS = [Binding("escape", "later", "Later", id="trust.later")]

    def __init__(self, question: TrustQuestion) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker", id="trust"):
            yield Static(Content.styled(TITLE, "bold $warning"))
            yield Static(Content(visible(str(self.question.directory), keep_newlines=False)))
            yield Static(
                Content("\n").join(
                    Content(f"• {visible(line, keep_newlines=False)}")
                    for line in self.question.lines
                ),
                id="trust-lines",
            )
            yield Static(Content.styled(EXPLAIN, "dim"))
            yield OptionList(Option(DECLINE, id="decline"), Option(ACCEPT, id="accept"))
            yield Static(Content.styled(LATER_HINT, "dim"))

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0  # the safe choice
        options.focus()

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id == "accept")

    def action_later(self) -> None:
        """Esc: nothing decided; the question comes again at the next start."""
        self.dismiss(None)
