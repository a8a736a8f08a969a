"""The question a tool row asks under `permissions: ask`: exactly what will run or change.

What the person approves must be what runs (docs/decisions/0006). The command (or what a file tool
will do) is shown whole and wrapped, with every character that could hide part of it
escaped and marked (`support.terminal_text.visible_parts`), and the question says how many
such characters it holds; a command longer than a line or two is shown whole too, and a line
above it says its size, so that a person knows to scroll to read it all. The path is absolute
and marked when outside the project; `s` says in words what it grants (`exactly this
command`, `ls with any arguments (it only reads)`).

An answer is always deliberate, and costs one key. The question owns the keys a/s/r while
it has the focus, and it takes the focus when it appears (`PermissionQuestion.Shown`: the
window decides), unless the person typed into the prompt in the last `PROMPT_QUIET_SECONDS`:
then it waits for F2 (or a click) and the prompt keeps its keys. Keys pressed in its first
`ARRIVAL_GUARD_SECONDS` after it took the focus by itself do not answer it: they are typing,
and go to the prompt with the focus (type-ahead never answers). After an answer the next open
question takes the keys, with its own guard; with none, the prompt has them again. F2 is a
deliberate key: the question it goes to answers at once.

`r` opens a line inside the question for the reason: Enter rejects, and what was
typed there goes to the model after the rejection text (nothing typed: the plain rejection);
Esc goes back to a/s/r. The prompt's text is never touched.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalGroup
from textual.content import Content
from textual.message import Message
from textual.widgets import Input, Static

from mm_tui.agent.events import PermissionAnswer, PermissionRequest
from mm_tui.support.terminal_text import hides, visible_parts
from mm_tui.widgets.output_log import DiffLog

QUESTIONS = {
    "bash": "Run this command?",
    "write_file": "Write this file?",
    "edit_file": "Apply this edit?",
    "read_file": "Read this file outside the project?",
    "lsp": "Apply this rename?",
}
ANSWER_WORDS = {
    PermissionAnswer.ALLOW_ONCE: "allowed once",
    PermissionAnswer.ALLOW_SESSION: "allowed for the session",
    PermissionAnswer.REJECT: "rejected",
}
AUTOMATIC_ANSWER = "allowed without asking"
REASON_PLACEHOLDER = "why? (optional: the model reads it)"
REASON_KEYS = "Enter rejects (with the reason typed above) · Esc back to a/s/r"
FOCUS_KEY = "f2"
#: A question that appears within this of the person's last key in the prompt waits for F2.
PROMPT_QUIET_SECONDS = 1.0
#: Keys pressed within this after a question took the focus by itself do not answer it.
ARRIVAL_GUARD_SECONDS = 0.4
ESCAPE_STYLE = "reverse $warning"
#: Above a command of more than `LONG_LINES` lines or `LONG_CHARS` characters.
COMMAND_SIZE = (
    "the command is {lines} line(s), {chars} characters: all shown below, scroll to read it all"
)
HIDDEN = "⚠ it holds {count} invisible or line-moving character(s), shown as escapes"
LONG_LINES = 3
LONG_CHARS = 300


def size_lines(detail: str) -> list[str]:
    """What the question says above a command: its size when it is long, and how many
    characters in it would not show as they are."""
    said: list[str] = []
    lines = detail.count("\n") + 1
    if lines > LONG_LINES or len(detail) > LONG_CHARS:
        said.append(COMMAND_SIZE.format(lines=f"{lines:,}", chars=f"{len(detail):,}"))
    hidden = sum(1 for char in detail if char not in "\n " and hides(char))
    if hidden:
        said.append(HIDDEN.format(count=f"{hidden:,}"))
    return said


def answer_text(answer: PermissionAnswer, automatic: bool) -> str:
    """How the row reports the answer: `allowed once`, `rejected`, `allowed without asking`…"""
    if automatic and answer != PermissionAnswer.REJECT:
        return AUTOMATIC_ANSWER
    return ANSWER_WORDS[answer]


def shown_exactly(text: str) -> Content:
    """`text` with every hiding character escaped and drawn in reverse, so an escape can
    never be mistaken for characters that were typed."""
    return Content.assemble(
        *((piece, ESCAPE_STYLE) if escaped else piece for piece, escaped in visible_parts(text))
    )


def key_hints(tool: str, grant: str = "", *, focused: bool = True) -> Content:
    """`a allow once · s allow bash(git status *) for this session · r reject`."""
    hints = Content(" · ").join(
        [
            Content.assemble(("a", "bold $success"), " allow once"),
            Content.assemble(
                ("s", "bold $success"), " allow ", shown_exactly(grant or tool), " for this session"
            ),
            Content.assemble(("r", "bold $error"), " reject"),
        ]
    )
    if focused:
        return hints
    return Content.assemble((FOCUS_KEY.upper(), "bold $warning"), " goes to the question · ", hints)


class RejectionReason(Input):
    """The line `r` opens: Enter rejects with what was typed, Esc goes back to the keys.

    While it has the focus, a/s/r are letters of the reason, and Esc is not an interrupt
    (the app's check lets the key through to here)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "back", "Back to a/s/r", id="question.reason_back"),
    ]

    class Back(Message):
        """Esc: no rejection after all; the question takes the keys again."""

    def action_back(self) -> None:
        self.post_message(self.Back())


class PermissionQuestion(VerticalGroup, can_focus=True):
    """The question, the command or file (with its diff), and the three keys it owns.

    `clock`: the window's clock (seconds), for the guard after it takes the keys."""

    DEFAULT_CSS = """
    PermissionQuestion {
        height: auto;
        border-left: thick $warning;
        padding: 0 0 0 1;
    }
    PermissionQuestion .question, PermissionQuestion .keys, PermissionQuestion .location,
    PermissionQuestion .detail, PermissionQuestion .size {
        height: auto;
    }
    PermissionQuestion:focus {
        border-left: thick $accent;
        background: $warning 8%;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('a')", "Allow once", id="question.allow_once"),
        Binding("s", "answer('s')", "Allow for session", id="question.allow_session"),
        Binding("r", "answer('r')", "Reject", id="question.reject"),
    ]

    class Answered(Message):
        """The person answered this question with a key (and, for `r`, maybe a reason)."""

        def __init__(self, call_id: str, key: str, reason: str = "") -> None:
            super().__init__()
            self.call_id = call_id
            self.key = key
            self.reason = reason

    class Shown(Message):
        """The question is on screen: the window gives it the keys, or leaves them where
        they are (the person is typing)."""

        def __init__(self, question: PermissionQuestion) -> None:
            super().__init__()
            self.question = question

    def __init__(
        self,
        request: PermissionRequest,
        *,
        preview_lines: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(classes="permission-question")
        self.request = request
        self.preview_lines = preview_lines
        self.clock = clock
        #: a/s/r answer from this time on (the guard after the question appears).
        self.keys_from = clock() + ARRIVAL_GUARD_SECONDS

    def compose(self) -> ComposeResult:
        question = QUESTIONS.get(self.request.name, f"Allow {self.request.name}?")
        yield Static(Content.styled(question, "bold $warning"), classes="question")
        if self.request.location:
            outside = "outside the project" in self.request.location
            style = "bold $error" if outside else "dim"
            yield Static(Content.styled(f"→ {self.request.location}", style), classes="location")
        for said in size_lines(self.request.detail):
            yield Static(Content.styled(said, "bold $warning"), classes="size")
        if self.request.detail:
            yield Static(shown_exactly(self.request.detail), classes="detail")
        if self.request.diff:
            yield DiffLog(self.request.diff, height=self.preview_lines)
        yield Static(self._hints(focused=self.has_focus), classes="keys")

    def on_mount(self) -> None:
        self.keys_from = self.clock() + ARRIVAL_GUARD_SECONDS
        self.post_message(self.Shown(self))

    def take_keys(self, *, guarded: bool = True) -> None:
        """Focus the question. `guarded` (it takes the keys by itself: on arrival, or next
        after an answer): a/s/r answer only `ARRIVAL_GUARD_SECONDS` from now; until then
        they are typing (the window hands them to the prompt). F2 is not guarded."""
        self.keys_from = self.clock() + (ARRIVAL_GUARD_SECONDS if guarded else 0.0)
        self.screen.set_focus(self)  # now, before the keys already queued
        if guarded:  # the footer shows a/s/r once they answer
            self.set_timer(ARRIVAL_GUARD_SECONDS, self.refresh_bindings)

    @property
    def answering(self) -> bool:
        """a/s/r answer now (the guard after it took the keys is over)."""
        return self.clock() >= self.keys_from

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # None in the guard: the footer shows a/s/r dimmed, the key is not taken, and the
        # window hands a printable one to the prompt, as any other letter typed here.
        if action == "answer" and not self.answering:
            return None
        return True

    def on_focus(self) -> None:
        self.query_one(".keys", Static).update(self._hints(focused=True))

    def on_blur(self) -> None:
        self.query_one(".keys", Static).update(self._hints(focused=False))

    def action_answer(self, key: str) -> None:
        if key != "r":
            self.post_message(self.Answered(self.request.call_id, key))
            return
        reasons = self.query(RejectionReason)
        reason = reasons.first() if reasons else RejectionReason(placeholder=REASON_PLACEHOLDER)
        if not reasons:
            self.mount(reason, before=self.query_one(".keys", Static))
        reason.focus()
        self.query_one(".keys", Static).update(self._hints(focused=True))

    @on(Input.Submitted, "RejectionReason")
    def _rejected(self, event: Input.Submitted) -> None:
        event.stop()
        self.post_message(self.Answered(self.request.call_id, "r", event.value.strip()))

    @on(RejectionReason.Back)
    async def _back_to_keys(self, event: RejectionReason.Back) -> None:
        event.stop()
        await self.query(RejectionReason).remove()
        self.focus()

    def _hints(self, *, focused: bool) -> Content:
        if self.query(RejectionReason):
            return Content.assemble(("Enter", "bold $error"), REASON_KEYS[len("Enter") :])
        return key_hints(self.request.name, self.request.grant, focused=focused)
