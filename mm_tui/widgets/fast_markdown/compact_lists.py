"""Markdown lists with a third of the widgets: one widget per simple list item.

Textual's lists build four widgets per item (a row, the bullet, a column, the paragraph). In a
long streamed answer the lists then hold most of the widgets, and every layout pass pays for
each of them: a 4,000-token answer with lists took 2.5x longer to lay out. An item holding one
paragraph is drawn here by a single block with a hanging indent; anything richer (nested
lists, code in a list) keeps Textual's structure.
"""

from __future__ import annotations

import contextlib

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Size

from mm_tui.widgets.textual_private import (
    MarkdownBlock,
    MarkdownBullet,
    MarkdownBulletList,
    MarkdownListItem,
    MarkdownOrderedList,
    MarkdownOrderedListItem,
    MarkdownParagraph,
    block_markdown,
    block_token,
    child_blocks,
    paragraph_content,
)


class ListItemLine(MarkdownBlock):
    """`• text that wraps` with the wrapped lines indented under the text, in one widget."""

    DEFAULT_CSS = """
    ListItemLine {
        width: 1fr;
        height: auto;
        margin-right: 1;
    }
    """

    def __init__(self, item: MarkdownListItem, symbol: str, paragraph: MarkdownParagraph) -> None:
        super().__init__(block_markdown(item), block_token(item))
        self.symbol = symbol
        self.set_content(paragraph_content(paragraph))

    def _wrapped(self, width: int) -> Content:
        indent = len(self.symbol)
        lines = paragraph_content(self).wrap(max(1, width - indent)) or [Content("")]
        bullet = Content.styled(self.symbol, "$text-primary")
        pad = Content(" " * indent)
        return Content("\n").join([bullet + lines[0], *(pad + line for line in lines[1:])])

    def render(self) -> Content:
        return self._wrapped(self.content_region.width or self.size.width)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._wrapped(width).split("\n")) if width else 0


def _simple_paragraph(block: object) -> MarkdownParagraph | None:
    """The item's only paragraph, when the item holds nothing else."""
    if isinstance(block, MarkdownListItem) and len(child_blocks(block)) == 1:
        only = child_blocks(block)[0]
        if type(only) is MarkdownParagraph:
            return only
    return None


def _item(block: MarkdownListItem, symbol: str) -> ListItemLine | Horizontal:
    paragraph = _simple_paragraph(block)
    if paragraph is not None:
        return ListItemLine(block, symbol, paragraph)
    bullet = MarkdownBullet()
    bullet.symbol = symbol
    return Horizontal(bullet, Vertical(*child_blocks(block)))


class CompactBulletList(MarkdownBulletList):
    """A bullet list whose simple items are single widgets."""

    def compose(self) -> ComposeResult:
        for block in child_blocks(self):
            if isinstance(block, MarkdownListItem):
                yield _item(block, block.bullet)
        child_blocks(self).clear()


class CompactOrderedList(MarkdownOrderedList):
    """A numbered list whose simple items are single widgets."""

    def compose(self) -> ComposeResult:
        items = [block for block in child_blocks(self) if isinstance(block, MarkdownListItem)]
        start = 1
        if items and isinstance(items[0], MarkdownOrderedListItem):
            with contextlib.suppress(ValueError):
                start = int(items[0].bullet)
        width = max((len(f"{number}. ") for number in range(start, start + len(items))), default=3)
        for number, block in enumerate(items, start):
            yield _item(block, f"{number}. ".rjust(width + 1))
        child_blocks(self).clear()
