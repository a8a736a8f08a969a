"""The model's blocks: its answer streamed as Markdown, and its reasoning folded.

Kept apart from the other blocks because Markdown (markdown-it, pygments) costs ~30 ms to
import: the transcript imports this module when the first answer arrives, not at start-up.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets.markdown import MarkdownStream

from mm_tui.support.terminal_text import literal
from mm_tui.widgets.compact_lists import CompactBulletList, CompactOrderedList

REASONING_TITLE = "Thinking"


class AnswerBlock(Markdown):
    """The model's answer, streamed through `MarkdownStream` (it batches fast deltas)."""

    BLOCKS = {
        **Markdown.BLOCKS,
        "bullet_list_open": CompactBulletList,
        "ordered_list_open": CompactOrderedList,
    }

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
