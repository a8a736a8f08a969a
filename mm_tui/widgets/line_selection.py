"""Text selection in widgets that draw their own lines (`render_line`), as Textual's Log does it.

Textual selects text in a widget through the cells it draws: each cell's style says where the
cell is in the widget's text (`offset` meta), the widget draws the selected part in the
selection's colours and says what text is selected (`get_selection`). Widgets that render a
whole `Content` get this from Textual; widgets drawing line by line (the streamed answer, long
lists and tables) must do it themselves, or dragging over them copies nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.content import Content
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip
from textual.style import Style
from textual.widget import Widget


def with_selection(widget: Widget, lines: Sequence[Content], first: int) -> list[Content]:
    """`lines` (line `first` on of `widget`) with their selected part in the selection's
    colours."""
    selection = widget.text_selection
    if selection is None:
        return list(lines)
    style = Style.from_styles(widget.screen.get_component_styles("screen--selection"))
    shown = []
    for n, line in enumerate(lines):
        span = selection.get_span(first + n)
        if span is not None:
            start, end = span
            line = line.stylize(style, start, len(line.plain) if end == -1 else end)
        shown.append(line)
    return shown


def placed(strip: Strip, y: int) -> Strip:
    """`strip` of line `y`, each cell saying where it is (Textual's selection reads it)."""
    return strip.apply_offsets(0, y)


def selected_text(lines: Sequence[Content], selection: Selection) -> str:
    """The text `selection` covers in `lines` (only the lines it spans are read)."""
    first = selection.start.y if selection.start is not None else 0
    last = selection.end.y if selection.end is not None else len(lines) - 1
    text = "\n".join(line.plain for line in lines[first : last + 1])
    start, end = selection
    within = Selection(
        None if start is None else Offset(start.x, 0),
        None if end is None else Offset(end.x, end.y - first),
    )
    return within.extract(text)
