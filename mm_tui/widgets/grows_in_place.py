"""Widgets that grow at the bottom without Textual drawing again the lines they already show.

When a widget's size changes, Textual 8.2.8 (`Widget._size_updated`) forgets every line it has
drawn of the widget, and when its size or scrollable size changes it sets its `virtual_size`, a
reactive that lays the whole screen out a second time. The streaming answer, the block holding it
and the followed transcript grow several times a second: their lines above stay what
they were, and the layout that changed their size is already done. So, mixed into them:
- a gain in height at the same width keeps the drawn lines (the new ones are drawn; the answer
  repaints the lines whose text changed itself) and asks for no second layout (showing or
  hiding a scrollbar still lays out: that reactive is Textual's own);
- any other change (the first size, a new width, a loss of height) is Textual's as before:
  a widget sized before its content was known gets its height from that second layout.

The mixin overrides private members of Textual, so it lives in the adapter that fences them
(mm_tui/widgets/textual_private.py, pinned in tests/architecture/test_textual_private.py).
"""

from __future__ import annotations

from mm_tui.widgets.textual_private import GrowsInPlace

__all__ = ["GrowsInPlace"]
