"""The question a tool row asks under `permissions: ask`: exactly what will run or change.

The keys a/s/r are bound on the app (priority bindings) so they answer even while the prompt
has focus; this widget only shows the question and its answer hint.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalGroup
from textual.content import Content
from textual.widgets import Static

from mm_tui.agent.events import PermissionAnswer, PermissionRequest
from mm_tui.widgets.output_log import DiffLog, OutputLog

QUESTIONS = {
    "bash": "Run this command?",
    "write_file": "Write this file?",
    "edit_file": "Apply this edit?",
    "lsp": "Apply this rename?",
}
ANSWER_WORDS = {
    PermissionAnswer.ALLOW_ONCE: "allowed once",
    PermissionAnswer.ALLOW_SESSION: "allowed for the session",
    PermissionAnswer.REJECT: "rejected",
}
AUTOMATIC_ANSWER = "allowed without asking"


def answer_text(answer: PermissionAnswer, automatic: bool) -> str:
    """How the row reports the answer: `allowed once`, `rejected`, `allowed without asking`…"""
    if automatic and answer != PermissionAnswer.REJECT:
        return AUTOMATIC_ANSWER
    return ANSWER_WORDS[answer]


def key_hints(tool: str) -> Content:
    """`a allow once · s allow bash for this session · r reject`."""
    return Content(" · ").join(
        [
            Content.assemble(("a", "bold $success"), " allow once"),
            Content.assemble(("s", "bold $success"), f" allow {tool} for this session"),
            Content.assemble(("r", "bold $error"), " reject"),
        ]
    )


class PermissionQuestion(VerticalGroup):
    """The question, the command or file (with its diff), and the three keys."""

    def __init__(self, request: PermissionRequest, *, preview_lines: int) -> None:
        super().__init__(classes="permission-question")
        self.request = request
        self.preview_lines = preview_lines

    def compose(self) -> ComposeResult:
        question = QUESTIONS.get(self.request.name, f"Allow {self.request.name}?")
        yield Static(Content.styled(question, "bold $warning"), classes="question")
        if self.request.detail:
            yield OutputLog(self.request.detail, height=self.preview_lines, classes="detail")
        if self.request.diff:
            yield DiffLog(self.request.diff, height=self.preview_lines)
        yield Static(key_hints(self.request.name), classes="keys")
