"""The answer while it streams: all its Markdown drawn by one widget, line by line.

Textual's Markdown mounts a widget per block and, on each append, builds new block widgets,
re-parses the open block and lays out the whole screen; at 50 tokens a second that cost ~6
CPU-seconds per 1,000 tokens on this project's 2-core machine (issue 16). Here the answer is one
widget holding lines (`markdown_lines.py`):
- blocks followed by another block can no longer change: they are drawn once and kept;
- only the open last block is parsed and drawn again when text arrives;
- the screen is laid out again only when the answer gains or loses lines, and (when `paced`)
  it gains them at most every `GROW_SECONDS`: each gain scrolls the followed transcript, which
  repaints every line on screen; in between only the lines that changed are repainted;
- a gain keeps the lines already drawn (`GrowsInPlace`): only the new ones are drawn;
- once the answer is taller than the followed view (`tail_room`), it stops growing and scrolls
  inside itself instead: a gain repaints the answer alone, with no layout of the transcript
  (whose cost grows with every mounted block); its lines above come back
  (`show_lines_above`) when the person scrolls, the view changes or the answer ends;
- each line is turned into a `Strip` once, when it first shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from textual.content import Content
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.visual import Visual
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from mm_tui.widgets.grows_in_place import GrowsInPlace
from mm_tui.widgets.line_selection import placed, selected_text, with_selection
from mm_tui.widgets.markdown_lines import (
    APPROXIMATE,
    IncrementalLines,
    LineRenderer,
    Palette,
    top_level_blocks,
)

#: A paced answer gains lines at most this often (a scroll of the followed transcript each).
GROW_SECONDS = 0.25


def _same(one: Content, other: Content) -> bool:
    return one.plain == other.plain and one.spans == other.spans


class AnswerStream(GrowsInPlace, MarkdownBlock):
    """Markdown appended piece by piece, drawn as lines by this one widget."""

    DEFAULT_CSS = """
    AnswerStream {
        width: 1fr;
        height: auto;
    }
    """

    def __init__(
        self,
        markdown: Markdown,
        parser: Callable[[], MarkdownIt],
        *,
        paced: bool = False,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`paced`: new lines wait for `grow()` when the last gain was under `GROW_SECONDS`
        ago on `clock` (the window's tick calls it)."""
        super().__init__(markdown, Token("answer_stream", "", 0))
        self._parser = parser()
        self.paced = paced
        self.clock = clock
        self.text = ""
        self._layout: IncrementalLines | None = None  # made at the first width
        self._lines: list[Content] = []  # what is drawn
        self._height = 0  # lines shown: fewer than `_lines` while a gain waits
        self._grown_at = -GROW_SECONDS
        self._strips: dict[int, Strip] = {}  # by line of the answer
        self._top = 0  # lines above the widget while the answer scrolls inside itself
        #: How tall the answer may stay while it scrolls inside itself (0: it grows). The
        #: transcript says: its view's height and a margin, while the view follows the bottom.
        self.tail_room: Callable[[], int] = lambda: 0

    @property
    def exact(self) -> bool:
        """Every block is drawn exactly as Textual's Markdown draws it."""
        if self._layout is not None:
            return self._layout.exact
        tokens = self._parser.parse(self.text)  # not laid out yet
        return not any(tokens[first].type in APPROXIMATE for first, _ in top_level_blocks(tokens))

    def extend(self, text: str) -> None:
        """Append Markdown; the lines that change are repainted."""
        self.text += text
        if self._layout is not None:
            old_settled = self._layout.settled
            self._layout.extend(text)
            self._show(self._layout.lines, min(old_settled, self._layout.settled))

    def _show(self, lines: list[Content], start: int) -> None:
        """Draw `lines`; those from `start` on may differ from what is drawn."""
        old, self._lines = self._lines, lines
        changed = [
            y
            for y in range(start, max(len(old), len(lines)))
            if y >= len(old) or y >= len(lines) or not _same(old[y], lines[y])
        ]
        for y in changed:
            self._strips.pop(y, None)
        if not self.is_mounted or not changed:
            return
        if len(lines) < self._height:  # lines gone (rare: a block turned shorter)
            self._height, self._top = len(lines), 0
            self.refresh(layout=True)
            return
        shown = [y - self._top for y in changed if self._top <= y < self._height]
        if shown:
            width = self._layout.width if self._layout is not None else self.size.width
            self.refresh(*(Region(0, y, width, 1) for y in shown))
        self.grow()

    @property
    def waiting(self) -> bool:
        """Lines are laid out that are not shown yet (`grow()` shows them)."""
        return len(self._lines) > self._height

    @property
    def hidden(self) -> int:
        """Lines above the widget while the answer scrolls inside itself."""
        return self._top

    def grow(self, *, now: bool = False) -> bool:
        """Show every laid-out line, if the last gain was long enough ago (or `now`)."""
        tall = self._height - self._top  # the widget's height
        room = 0 if now else self.tail_room()
        scrolls = 0 < room <= tall  # the followed view shows lines of the answer alone
        if self._top and not scrolls:
            self.show_lines_above()  # the view no longer follows, or outgrew the answer
        if len(self._lines) <= self._height:
            return False
        moment = self.clock()
        if self.paced and not now and moment - self._grown_at < GROW_SECONDS:
            return False
        gained = len(self._lines) - self._height
        self._height, self._grown_at = len(self._lines), moment
        if scrolls:  # every shown line moves up: a repaint of the answer, no layout
            self._top += gained
            self.refresh()
        else:  # the lines above are drawn already (GrowsInPlace); the layout draws the new ones
            self.refresh(layout=True, repaint=False)
        return True

    def show_lines_above(self) -> int:
        """Bring back the lines above the widget (a layout); how many there were."""
        hidden, self._top = self._top, 0
        if hidden:
            self.refresh(layout=True)
        return hidden

    def _palette(self) -> Palette:
        app = self.app
        return Palette.of(
            app.get_css_variables(),
            self.background_colors[1],
            ansi=bool(app.ansi_color),
            dark=app.current_theme.dark,
        )

    def _relayout(self, width: int, palette: Palette | None = None) -> None:
        """Lay everything out again at a new width (or in a new theme)."""
        renderer = LineRenderer(self._token_to_content, palette or self._palette())
        self._layout = IncrementalLines(self._parser.parse, renderer, width)
        if self.text:
            self._layout.extend(self.text)
        self._lines, self._strips = self._layout.lines, {}
        self._height, self._top = len(self._lines), 0  # a layout is under way: all lines show
        if self._height:  # a gain of lines: the pacing starts here (an empty layout is none,
            self._grown_at = self.clock()  # or the first lines would wait for no reason)

    # -- Textual's side ---------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width and (self._layout is None or width != self._layout.width):
            self._relayout(width)
        return self._height - self._top

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._layout is not None and (palette := self._palette()) != self._layout.palette:
            self._relayout(self._layout.width, palette)  # a new theme: new colours
            self.refresh(layout=True)

    def render_line(self, y: int) -> Strip:
        width = self.content_region.width or self.size.width
        if self._layout is None or width != self._layout.width:
            self._relayout(width)
        # Lines are numbered in the answer, not in the widget: the strips (and the offsets a
        # selection reads from them) stay right while the answer scrolls inside itself.
        y += self._top
        strip = self._strips.get(y)
        if strip is None:
            if not 0 <= y < self._height:
                return Strip.blank(width, self.visual_style.rich_style)
            (line,) = with_selection(self, self._lines[y : y + 1], y)
            strips = Visual.to_strips(
                self, line, width, 1, self.visual_style, apply_selection=False
            )
            strip = self._strips[y] = placed(strips[0], y)
        return strip

    # -- text selection (line_selection.py): a finished answer stays this widget ---------

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self._lines[: self._height], selection), "\n"
