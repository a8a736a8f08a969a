"""The transcript's small blocks: the person's messages, notices, turn summaries.

Each knows its Markdown for `/export`, and its record (`archive.Archived`) for when it leaves
the layout or was never mounted. Text from the model or the person is never parsed as markup
(STYLE: `Content`, `markup=False`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.content import Content
from textual.widgets import Static

from mm_tui.agent.events import NoticeLevel, TurnSummary
from mm_tui.support.terminal_text import literal, one_line

USER_MARK = "›"
# Glyph and theme colour of each notice level: four looks that never get confused.
NOTICE_LOOK: dict[str, tuple[str, str]] = {
    "info": ("ℹ", "$primary"),
    "warning": ("⚠", "$warning"),
    "error": ("✗", "$error"),
    "loop": ("↻", "$error"),
}


class UserMessage(Static):
    """What the person sent, shown as typed."""

    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 0 0;
        padding: 0 1;
        background: $boost;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(
            Content.assemble((f"{USER_MARK} ", "bold $accent"), literal(text)),
            classes="user-message",
        )
        self.text = text

    def to_markdown(self) -> str:
        return UserRecord(self.text).markdown()

    def archived(self) -> UserRecord:
        return UserRecord(self.text)


class NoticeLine(Static):
    """One clear line: a server fault, a warning, a loop verdict, or information."""

    DEFAULT_CSS = """
    NoticeLine {
        padding: 0 1;
    }
    NoticeLine.notice-error, NoticeLine.notice-loop {
        background: $error 15%;
    }
    NoticeLine.notice-warning {
        background: $warning 10%;
    }
    """

    def __init__(self, level: NoticeLevel, text: str) -> None:
        glyph, style = NOTICE_LOOK.get(level, NOTICE_LOOK["info"])
        super().__init__(
            Content.assemble((f"{glyph} ", f"bold {style}"), (one_line(text), style)),
            classes=f"notice notice-{level}",
        )
        self.level: NoticeLevel = level
        self.text = text

    def to_markdown(self) -> str:
        return NoticeRecord(self.level, self.text).markdown()

    def archived(self) -> NoticeRecord:
        return NoticeRecord(self.level, self.text)


class SummaryLine(Static):
    """SPEC §7's line after every turn, with duration and tokens."""

    DEFAULT_CSS = """
    SummaryLine {
        padding: 0 1;
        margin: 0 0 1 0;
    }
    """

    def __init__(self, summary: TurnSummary) -> None:
        super().__init__(Content.styled(summary.line(), "dim"), classes="summary")
        self.summary = summary

    def to_markdown(self) -> str:
        return SummaryRecord(self.summary).markdown()

    def archived(self) -> SummaryRecord:
        return SummaryRecord(self.summary)


# -- the same blocks as records (out of the layout) --------------------------------------------


@dataclass(frozen=True, slots=True)
class UserRecord:
    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        return "\n".join(f"> {line}" for line in self.text.splitlines() or [""])

    def revive(self) -> UserMessage:
        return UserMessage(self.text)


@dataclass(frozen=True, slots=True)
class NoticeRecord:
    level: NoticeLevel
    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        glyph = NOTICE_LOOK.get(self.level, NOTICE_LOOK["info"])[0]
        return f"{glyph} *{self.level}*: {literal(self.text)}"

    def revive(self) -> NoticeLine:
        return NoticeLine(self.level, self.text)


@dataclass(frozen=True, slots=True)
class SummaryRecord:
    summary: TurnSummary
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        return f"*{self.summary.line()}*"

    def revive(self) -> SummaryLine:
        return SummaryLine(self.summary)
