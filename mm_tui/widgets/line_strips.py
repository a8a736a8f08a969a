"""One line of text that already fits its widget, turned into a `Strip` without Textual's
generic path, with the same segments, for less CPU per frame.

`Visual.to_strips` draws any `Content` at any width: it splits it into lines, expands tabs,
wraps, truncates and aligns each, resolves and combines the styles of its spans, and builds
each segment's Rich style; then `line_selection.placed` builds every style again to say which
line the cells are on. For a line laid out at the width already (the streamed answer's) or
one short line (the status line) most of that finds nothing to do, and it cost ~0.1 ms a
line, redrawn with every frame. Here the style of each combination of spans is worked out once
(`_RESOLVED`) and each segment's Rich style is built once, with the cells' final offsets.

This follows Textual's private formatting (`Content._wrap_and_format`, `_FormattedLine.to_strip`,
`Content.render`, `Widget._get_style`; Textual is pinned exactly in pyproject):
tests/window/test_line_strips.py compares `line_strip` with `Visual.to_strips` on every kind of
line the answer draws, so an upgrade that changes the generic path fails that test instead of
drifting. Whatever this does not cover (a line that does not fit, tabs, alignment, padding,
links, a selection Textual applies) takes the generic path.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.content import Content
from textual.strip import Strip
from textual.style import Style
from textual.visual import Visual
from textual.widget import Widget

from mm_tui.widgets.line_selection import placed
from mm_tui.widgets.textual_private import span_style_resolver

#: The Rich style of each combination of the widget's style and span styles, without the
#: cells' offsets: (its attributes as `RichStyle` arguments, its meta); None: it holds a link
#: (`@click`), which Textual styles by the widget's state (the generic path draws it).
_RESOLVED: dict[tuple[Style, ...], tuple[dict[str, Any], dict[str, Any]] | None] = {}
_RESOLVED_MOST = 4096  # combinations kept (a theme has a few dozen); past it, start again

_ATTRIBUTES = (
    "color",
    "bgcolor",
    "bold",
    "dim",
    "italic",
    "underline",
    "blink",
    "blink2",
    "reverse",
    "conceal",
    "strike",
    "underline2",
    "frame",
    "encircle",
    "overline",
    "link",
)


def line_strip(widget: Widget, line: Content, width: int, style: Style, y: int = 0) -> Strip:
    """`line` drawn `width` cells wide over `style`, each cell saying it is on line `y`: the
    same segments as `placed(Visual.to_strips(widget, line, width, 1, style,
    apply_selection=False)[0], y)` (for `y` 0 the same as `to_strips` alone); a blank strip
    where that draws no line (a width of 0)."""
    segments = _segments(widget, line, width, style, y)
    if segments is None:
        strips = Visual.to_strips(widget, line, width, 1, style, apply_selection=False)
        if not strips:
            return Strip.blank(width, style.rich_style)
        return placed(strips[0], y)
    return Strip(segments, line.cell_length)


def _fits(widget: Widget, line: Content, width: int) -> bool:
    """Whether the generic path draws `line` as one unchanged line from its left edge: no
    line break or tab, no wider than `width` (in cells, and in characters, which Textual
    compares when it strips trailing blanks), spans within the text, left-aligned and unpadded."""
    text = line.plain
    if width <= 0 or len(text) > width:
        return False
    if "\n" in text or "\t" in text or line.cell_length > width:
        return False
    end = len(text)
    if any(not 0 <= span.start <= span.end <= end for span in line.spans):
        return False
    rules = widget.styles
    return (
        rules.get("text_align", "left") in ("left", "start")
        and rules.get("line_pad", 0) == 0
        and tuple(rules.content_align) == ("left", "top")
    )


def _segments(
    widget: Widget, line: Content, width: int, style: Style, y: int
) -> list[Segment] | None:
    """The segments of `line`, or None where the generic path must draw it."""
    if not _fits(widget, line, width):
        return None
    text = line.plain
    spans = line.spans
    # Content.render: a line without spans is one segment, even empty
    runs = _runs(widget, line) if spans else [(0, len(text), ())]
    resolved: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for _, _, styles in runs:
        key = (style, *styles)
        try:
            found = _RESOLVED[key]
        except KeyError:
            if len(_RESOLVED) >= _RESOLVED_MOST:
                _RESOLVED.clear()
            found = _RESOLVED[key] = _resolve(style, styles)
        if found is None:
            return None
        resolved.append(found)
    segments = []
    x = 0
    for (start, end, _), (attributes, meta) in zip(runs, resolved, strict=True):
        segments.append(
            Segment(text[start:end], RichStyle(**attributes, meta={**meta, "offset": (x, y)}))
        )
        x += end - start
    return segments


def _runs(widget: Widget, line: Content) -> list[tuple[int, int, tuple[Style, ...]]]:
    """(start, end, styles of the spans over it, in span order) for each run of `line`'s text
    under the same spans, as `Content.render` cuts it."""
    get_style = span_style_resolver(widget)
    styles = [
        get_style(span.style) if isinstance(span.style, str) else span.style for span in line.spans
    ]
    events = [
        (0, False, 0),
        *((span.start, False, index) for index, span in enumerate(line.spans, 1)),
        *((span.end, True, index) for index, span in enumerate(line.spans, 1)),
        (len(line.plain), True, 0),
    ]
    events.sort(key=itemgetter(0, 1))
    stack: list[int] = []
    runs = []
    for (offset, leaving, index), (next_offset, _, _) in zip(events, events[1:], strict=False):
        if leaving:
            stack.remove(index)
        else:
            stack.append(index)
        if next_offset > offset:
            runs.append((offset, next_offset, tuple(styles[n - 1] for n in sorted(stack) if n)))
    return runs


def _resolve(
    style: Style, styles: tuple[Style, ...]
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The Rich style `_FormattedLine.to_strip` gives text under `styles` over `style`, as
    arguments and meta (None if it is a link)."""
    combined = style + Style.combine([style, *styles])
    meta = dict(combined.meta)
    if "@click" in meta:
        return None
    rich = combined.rich_style_with_offset(0, 0)  # Textual's colours (blended), attributes
    return {name: getattr(rich, name) for name in _ATTRIBUTES}, meta
