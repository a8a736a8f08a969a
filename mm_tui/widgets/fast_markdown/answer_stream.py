"""The answer while it streams: all its Markdown drawn by one widget, line by line.

Textual's Markdown mounts a widget per block and, on each append, builds new block widgets,
re-parses the open block and lays out the whole screen; at 50 tokens a second that cost ~6
CPU-seconds per 1,000 tokens on this project's 2-core machine (measured). Here the answer is one
widget holding lines (`markdown_lines.py`):
- blocks followed by another block can no longer change: they are drawn once and kept;
- only the open last block is parsed and drawn again when text arrives;
- with a `LineGate` (the window ticks), text is drawn only when whole wrapped lines are
  complete, or as a heartbeat (line_gate.py): a frame costs 2 to 3.5 ms whatever it shows, so
  a frame per token or per tick was most of the window's CPU. Text is laid out only when it
  may have completed a line (a newline, or enough of it to fill the last line) and a frame is
  allowed: laying out the open block again costs ~1 ms;
- the screen is laid out again only when the answer gains or loses lines; in between only the
  lines that changed are repainted;
- a gain keeps the lines already drawn (`GrowsInPlace`): only the new ones are drawn;
- once the answer is taller than the followed view (`tail_room`), it stops growing and scrolls
  inside itself instead: a gain repaints the answer alone, with no layout of the transcript
  (whose cost grows with every mounted block); its lines above come back
  (`show_lines_above`) when the person scrolls, the view changes or the answer ends;
- it grows, and scrolls inside itself, by a third of the view at once (`JUMP_SHARE`), leaving
  blank rows below its last line that the next lines fill: a frame that moves every line
  repaints the whole view (Textual has no terminal scroll regions) and a growth lays the
  screen out, while one that fills a blank row repaints that row alone. So the text stands
  still while it is written, and moves seldom; the blank rows go when the answer ends. An
  answer shorter than that grows line by line (a short reply shows no blank rows). A move
  inside itself still repaints every row of the view, but the rows Textual drew move up with
  their lines (`_shift_drawn`): only the rows that come are drawn again;
- each line is turned into a `Strip` once, when it first shows.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from markdown_it import MarkdownIt
from markdown_it.token import Token
from rich.cells import cell_len
from textual.content import Content
from textual.geometry import Region, Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownBlock

from mm_tui.widgets.fast_markdown.line_gate import LineGate
from mm_tui.widgets.fast_markdown.markdown_lines import (
    APPROXIMATE,
    IncrementalLines,
    LineRenderer,
    Palette,
    top_level_blocks,
)
from mm_tui.widgets.grows_in_place import GrowsInPlace
from mm_tui.widgets.line_selection import selected_text, with_selection
from mm_tui.widgets.line_strips import line_strip
from mm_tui.widgets.textual_private import shift_drawn_rows, token_converter

#: A followed answer grows, or moves up inside itself, by this share of the view at once.
JUMP_SHARE = 3


def _same(one: Content, other: Content) -> bool:
    return one.plain == other.plain and one.spans == other.spans


def _room_left(layout: IncrementalLines) -> int:
    """Cells left on the last line holding text (blank margins and padding are not text)."""
    for line in reversed(layout.lines):
        if text := line.plain.rstrip():
            return layout.width - cell_len(text)
    return layout.width


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
        gate: LineGate | None = None,
    ) -> None:
        """`gate`: text is laid out as it comes and drawn when `draw()` finds the gate open
        (the window's tick calls it); None: drawn at once."""
        super().__init__(markdown, Token("answer_stream", "", 0))
        self._parser = parser()
        self.gate = gate
        self.text = ""
        self._layout: IncrementalLines | None = None  # made at the first width
        self._lines: list[Content] = []  # what is drawn
        self._height = 0  # lines shown
        self._bottom = 0  # the widget's last row + 1, in lines of the answer (blank rows below
        # the lines shown while it scrolls inside itself)
        self._drawn_settled = 0  # lines before this had settled when last drawn
        self._unlaid = ""  # text not laid out yet (a gate holds it)
        self._room = 0  # cells left on the last line of text laid out
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
        """Append Markdown: laid out now; the lines that change are repainted now, or by
        `draw()` when there is a gate."""
        self.text += text
        if self._layout is None:
            return  # laid out whole at the first width
        self._unlaid += text
        if self.gate is None:
            self.draw(force=True)
        else:
            self.gate.changed()

    def draw(self, *, force: bool = False) -> bool:
        """Draw the text if it completed lines (or waited `HEARTBEAT_SECONDS`, or `force`);
        whether it drew. Lines before those settled at the last draw cannot differ."""
        layout, gate = self._layout, self.gate
        if layout is None:
            return False
        if not force and gate is not None and not gate.overdue():
            if not gate.lines_due() or not self._may_complete_a_line():
                return False
            self._lay_out(layout)
            if len(layout.lines) <= len(self._lines):
                return False  # no whole line yet: the last line waits
        self._lay_out(layout)
        if gate is not None:
            gate.drawn()
        if layout.lines is self._lines:
            return False
        start, self._drawn_settled = self._drawn_settled, layout.settled
        self._show(layout.lines, start)
        return True

    def _may_complete_a_line(self) -> bool:
        """Whether the text not laid out may end the last line: a newline, or more cells than
        are left on it (Markdown's marks only take cells away; a tab may add some)."""
        text = self._unlaid
        return "\n" in text or "\t" in text or cell_len(text) + 1 >= self._room

    def _lay_out(self, layout: IncrementalLines) -> None:
        if self._unlaid:
            started = time.perf_counter()
            layout.extend(self._unlaid)
            self._unlaid = ""
            self._room = _room_left(layout)
            if self.gate is not None:
                self.gate.laid_out(time.perf_counter() - started)

    @property
    def shown(self) -> list[str]:
        """The text of the lines drawn (the answer's, those above the widget included)."""
        return [line.plain for line in self._lines[: self._height]]

    @property
    def waiting(self) -> bool:
        """Text arrived that is not drawn yet (`draw()` draws it)."""
        layout = self._layout
        return bool(self._unlaid) or layout is not None and layout.lines is not self._lines

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
            self._height = self._bottom = len(lines)
            self._top = 0
            self.refresh(layout=True)
            return
        if self.grow(changed=changed):
            return  # every row is drawn again
        shown = [y - self._top for y in changed if self._top <= y < self._height]
        if shown:
            width = self._layout.width if self._layout is not None else self.size.width
            self.refresh(*(Region(0, y, width, 1) for y in shown))

    @property
    def hidden(self) -> int:
        """Lines above the widget while the answer scrolls inside itself."""
        return self._top

    @property
    def blank_below(self) -> int:
        """Blank rows below the last line, which its next lines fill (a followed answer grows
        and scrolls inside itself by `JUMP_SHARE` of the view at once)."""
        return self._bottom - self._height

    def grow(self, *, now: bool = False, changed: Iterable[int] = ()) -> bool:
        """Show every drawn line (`now`: with the lines above and no blank rows, as the answer
        ends); whether every row will be drawn again (else the caller repaints the rows whose
        text changed: the lines `changed`, numbered in the answer)."""
        room = 0 if now else self.tail_room()
        if self._top and not 0 < room <= self._bottom - self._top:
            self.show_lines_above()  # the view no longer follows, or outgrew the answer
        lines = len(self._lines)
        if lines <= self._bottom:  # in the blank rows below: the caller repaints those rows
            self._height = max(self._height, lines)
            if now and self._bottom > self._height:
                self._bottom = self._height  # the answer ends: its blank rows go
                self.refresh(layout=True)
                return True
            return False
        self._height = lines
        jump = max(2, room // JUMP_SHARE) if room else 0
        top, tall = self._top, self._bottom - self._top
        if jump and lines >= jump:  # followed, and not a short answer: `jump` rows at once,
            self._bottom = lines + jump  # blank below its last line; taller than the view,
            self._top = max(0, self._bottom - room)  # it scrolls inside itself by as many
        else:
            self._bottom = lines
        if self._top == top:  # it grew at the bottom: the lines above are drawn already
            self.refresh(layout=True, repaint=False)  # (GrowsInPlace); the layout draws the
            return False  # new rows, the caller the rows whose text changed
        if self._bottom - self._top == tall:  # every shown line moved up, by `shift` rows
            self._shift_drawn(self._top - top, stale={y - top for y in changed})
            return True
        self.refresh(layout=True)
        return True

    def _shift_drawn(self, shift: int, stale: set[int]) -> None:
        """Repaint every row, its lines moved up `shift` rows: the rows Textual drew already
        (its styles cache, by row) move with them, so only the rows that come are drawn, and
        those whose text changed (`stale`, rows before the move)."""
        shift_drawn_rows(self, shift, stale)

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
            ansi=app.native_ansi_color,
            dark=app.current_theme.dark,
        )

    def _relayout(self, width: int, palette: Palette | None = None) -> None:
        """Lay everything out again at a new width (or in a new theme)."""
        renderer = LineRenderer(token_converter(self), palette or self._palette())
        self._layout = IncrementalLines(self._parser.parse, renderer, width)
        if self.text:
            self._layout.extend(self.text)
        self._lines, self._strips = self._layout.lines, {}
        self._height = self._bottom = len(self._lines)  # a layout is under way: all lines show
        self._top = 0
        self._drawn_settled, self._unlaid = self._layout.settled, ""
        self._room = _room_left(self._layout)
        if self.gate is not None and self._height:  # an empty layout draws nothing: the first
            self.gate.drawn()  # lines, when they come, are drawn at once

    # -- Textual's side ---------------------------------------------------------------

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width and (self._layout is None or width != self._layout.width):
            self._relayout(width)
        return self._bottom - self._top

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
            strip = self._strips[y] = line_strip(self, line, width, self.visual_style, y)
        return strip

    # -- text selection (line_selection.py): a finished answer stays this widget ---------

    def selection_updated(self, selection: Selection | None) -> None:
        self._strips.clear()
        self.refresh()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        return selected_text(self._lines[: self._height], selection), "\n"
