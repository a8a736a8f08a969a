"""The model's blocks: its answer streamed as Markdown, and its reasoning folded.

Kept apart from the other blocks because Markdown (markdown-it, pygments) costs ~30 ms to
import: the transcript imports this module when the first answer arrives, not at start-up.
`AnswerBlock` is the answer in Textual's own `Markdown`, streamed with its `MarkdownStream`;
`answer_block()` gives mm-tui's faster drawing of it (the `fast_markdown` package) unless
`MM_TUI_MARKDOWN=stock` (`markdown_choice.py`).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from markdown_it import MarkdownIt
from textual.content import Content
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from mm_tui.support.terminal_text import literal
from mm_tui.widgets.markdown_choice import stock_markdown

REASONING_TITLE = "Thinking"


class AnswerBlock(Markdown):
    """The model's answer in Textual's stock `Markdown`: pieces go to a `MarkdownStream`
    (which joins the pieces that come faster than it draws). The base of mm-tui's own drawing
    (`fast_answer.FastAnswerBlock`) and what `MM_TUI_MARKDOWN=stock` draws with."""

    DEFAULT_CSS = """
    AnswerBlock {
        margin: 0;
        padding: 0 1;
        background: transparent;
    }
    """

    def __init__(
        self,
        markdown: str = "",
        *,
        clocked: bool = False,
        tail_room: Callable[[], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
        parser_factory: Callable[[], MarkdownIt] | None = None,
    ) -> None:
        """`clocked`, `tail_room` and `clock`: how the window's clock and followed view pace a
        streaming answer (`FastAnswerBlock`; Textual's stream paces itself)."""
        super().__init__(markdown or None, classes="answer", parser_factory=parser_factory)
        self.parts: list[str] = [markdown] if markdown else []
        self.clocked = clocked
        self.tail_room = tail_room
        self.clock = clock
        self._unshown: list[str] = []
        self._finished = False
        self._markdown_stream: MarkdownStream | None = None

    async def add(self, text: str) -> None:
        """Append a piece of the answer (drawn once the block is mounted)."""
        text = literal(text)
        if not text:
            return
        self.parts.append(text)
        self._unshown.append(text)
        if self.is_mounted:
            await self._pieces_arrived()

    def on_mount(self) -> None:
        # Pieces that arrived before the block was mounted are drawn after the mount: its
        # handlers run this one (subclasses define none) before Markdown's, which draws the
        # initial, empty, document.
        if self._unshown:
            self.call_next(self._pieces_arrived)

    async def _pieces_arrived(self) -> None:
        """Pieces wait in `_unshown`: drawn now (Textual's stream paces its own drawing)."""
        if not self._unshown:
            return
        text = "".join(self._unshown)
        self._unshown.clear()
        if self._finished and self._markdown_stream is None:
            await self.update(text)  # whole before it was ever drawn
            return
        if self._markdown_stream is None:
            self._markdown_stream = Markdown.get_stream(self)
        await self._markdown_stream.write(text)

    async def finish(self) -> None:
        """The answer is complete: what the stream holds is drawn before this returns."""
        self._finished = True
        if self.is_mounted and self._unshown:
            await self._pieces_arrived()
        if self._markdown_stream is not None:
            stream, self._markdown_stream = self._markdown_stream, None
            await stream.stop()

    async def tick(self) -> bool:
        """The window's clock: Textual's stream draws on its own; nothing drawn here."""
        return False

    def show_lines_above(self) -> int:
        """Lines of the answer held above its widget: none (Textual's blocks are all laid out)."""
        return 0

    def to_markdown(self) -> str:
        return "".join(self.parts).strip()

    def archived(self) -> AnswerRecord:
        return AnswerRecord("".join(self.parts))


#: mm-tui's own drawing, named rather than imported: it subclasses `AnswerBlock` here.
FAST_ANSWER = "mm_tui.widgets.fast_markdown"


def answer_class() -> type[AnswerBlock]:
    """How this process draws answers: `FastAnswerBlock`, or the stock `AnswerBlock` under
    `MM_TUI_MARKDOWN=stock` (which then imports none of mm-tui's own drawing)."""
    if stock_markdown():
        return AnswerBlock
    fast: type[AnswerBlock] = importlib.import_module(FAST_ANSWER).FastAnswerBlock
    return fast


def answer_block(
    markdown: str = "",
    *,
    clocked: bool = False,
    tail_room: Callable[[], int] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> AnswerBlock:
    """A new answer block, drawn as `answer_class()` says."""
    return answer_class()(markdown, clocked=clocked, tail_room=tail_room, clock=clock)


class ReasoningBlock(Collapsible):
    """The model's reasoning, folded: shown on request, never sent back to the model."""

    DEFAULT_CSS = """
    /* Collapsible's own look (a surface, a top border, padding) is not for a thought folded
       inside an answer; `:ansi` is restated because Collapsible's `:ansi` rule is more specific. */
    ReasoningBlock, ReasoningBlock:ansi {
        margin: 0;
        padding: 0;
        border: none;
        background: transparent;
        color: $text-muted;
    }
    ReasoningBlock .reasoning-text {
        color: $text-muted;
    }
    """

    def __init__(self, text: str = "") -> None:
        body = Static("", markup=False, classes="reasoning-text")
        super().__init__(body, title=REASONING_TITLE, collapsed=True, classes="reasoning")
        self.text = ""
        self._body = body
        if text:
            self.add(text)

    def add(self, text: str) -> None:
        """Append reasoning text; drawn while the block is open (folded, an update of its
        hidden text would still lay the screen out at every tick while the model thinks)."""
        self.text += literal(text)
        if not self.collapsed:
            self._body.update(Content(self.text))

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed:
            self._body.update(Content(self.text))

    def to_markdown(self) -> str:
        return ReasoningRecord(self.text).markdown()

    def archived(self) -> ReasoningRecord:
        return ReasoningRecord(self.text)


@dataclass(frozen=True, slots=True)
class AnswerRecord:
    """An answer out of the layout (`archive.Archived`): its text, already literal."""

    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        return self.text.strip()

    def revive(self) -> AnswerBlock:
        return answer_block(self.text)


@dataclass(frozen=True, slots=True)
class ReasoningRecord:
    """Reasoning out of the layout (`archive.Archived`)."""

    text: str
    call_id: str | None = field(default=None, init=False, repr=False)  # not a row

    def markdown(self) -> str:
        quoted = "\n".join(f"> {line}" for line in self.text.strip().splitlines())
        return f"> *{REASONING_TITLE}*\n>\n{quoted}"

    def revive(self) -> ReasoningBlock:
        return ReasoningBlock(self.text)
