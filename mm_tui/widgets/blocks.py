"""The transcript's other blocks: the person's messages, answers, reasoning, notices, summaries.

Each knows its Markdown for `/export`. Text from the model or the person is never parsed as
markup (STYLE: `Content`, `markup=False`).
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from mm_tui.agent.events import NoticeLevel, TurnSummary
from mm_tui.widgets.literal_text import literal

USER_MARK = "›"
REASONING_TITLE = "Thinking"
# Glyph and theme colour of each notice level: four looks that never get confused.
NOTICE_LOOK: dict[str, tuple[str, str]] = {
    "info": ("ℹ", "$primary"),
    "warning": ("⚠", "$warning"),
    "error": ("✗", "$error"),
    "loop": ("↻", "$error"),
}


class UserMessage(Static):
    """What the person sent, shown as typed."""

    def __init__(self, text: str) -> None:
        super().__init__(
            Content.assemble((f"{USER_MARK} ", "bold $accent"), literal(text)),
            classes="user-message",
        )
        self.text = text

    def to_markdown(self) -> str:
        quoted = "\n".join(f"> {line}" for line in self.text.splitlines() or [""])
        return f"{quoted}"


class AnswerBlock(Markdown):
    """The model's answer, streamed through `MarkdownStream` (it batches fast deltas)."""

    def __init__(self) -> None:
        super().__init__(classes="answer")
        self.parts: list[str] = []
        self._stream: MarkdownStream | None = None

    async def add(self, text: str) -> None:
        """Append a piece of the answer."""
        text = literal(text)
        if not text:
            return
        self.parts.append(text)
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        await self._stream.write(text)

    async def finish(self) -> None:
        """Flush what is pending: the answer is complete."""
        if self._stream is not None:
            stream, self._stream = self._stream, None
            await stream.stop()

    def to_markdown(self) -> str:
        return "".join(self.parts).strip()


class ReasoningBlock(Collapsible):
    """The model's reasoning, folded: shown on request, never sent back to the model."""

    def __init__(self) -> None:
        body = Static("", markup=False, classes="reasoning-text")
        super().__init__(body, title=REASONING_TITLE, collapsed=True, classes="reasoning")
        self.text = ""
        self._body = body

    def add(self, text: str) -> None:
        """Append reasoning text."""
        self.text += literal(text)
        self._body.update(Content(self.text))

    def to_markdown(self) -> str:
        quoted = "\n".join(f"> {line}" for line in self.text.strip().splitlines())
        return f"> *{REASONING_TITLE}*\n>\n{quoted}"


class NoticeLine(Static):
    """One clear line: a server fault, a warning, a loop verdict, or information."""

    def __init__(self, level: NoticeLevel, text: str) -> None:
        glyph, style = NOTICE_LOOK.get(level, NOTICE_LOOK["info"])
        super().__init__(
            Content.assemble((f"{glyph} ", f"bold {style}"), (literal(text), style)),
            classes=f"notice notice-{level}",
        )
        self.level = level
        self.text = text

    def to_markdown(self) -> str:
        glyph = NOTICE_LOOK.get(self.level, NOTICE_LOOK["info"])[0]
        return f"{glyph} *{self.level}*: {literal(self.text)}"


class SummaryLine(Static):
    """SPEC §7's line after every turn, with duration and tokens."""

    def __init__(self, summary: TurnSummary) -> None:
        super().__init__(Content.styled(summary.line(), "dim"), classes="summary")
        self.summary = summary

    def to_markdown(self) -> str:
        return f"*{self.summary.line()}*"
