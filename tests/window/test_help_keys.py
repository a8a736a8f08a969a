"""The keys are documented once: the help page and the README's table come from one list, and
every binding with an id that a person can press in the window is in it."""

from __future__ import annotations

from pathlib import Path

from textual.binding import Binding

from mm_tui.app import MMApp
from mm_tui.widgets.help_screen import KEY_HELP, keys_markdown
from mm_tui.widgets.permission import PermissionQuestion, RejectionReason
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.tool_row import ToolRow

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_key_table_is_the_help_page_table() -> None:
    assert keys_markdown() in README.read_text(encoding="utf-8")


def test_every_binding_of_the_window_is_on_the_help_page() -> None:
    documented = {binding_id for _, _, ids in KEY_HELP for binding_id in ids}
    bindings = [
        binding
        for owner in (
            MMApp,
            PromptInput,
            ToolRow,
            PermissionQuestion,
            RejectionReason,
        )
        for binding in owner.BINDINGS
        if isinstance(binding, Binding)
    ]
    ids = {binding.id for binding in bindings if binding.id}
    assert ids == documented
