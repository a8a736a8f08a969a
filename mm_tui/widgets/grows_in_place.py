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

Private members of Textual, overridden here only: pinned in
tests/architecture/test_private_apis.py (Textual is pinned exactly in pyproject).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region, Size

if TYPE_CHECKING:

    class _Mixin:
        """What the mixin uses of the widget it is mixed into (Textual's `Widget`)."""

        @property
        def outer_size(self) -> Size: ...

        def _size_updated(
            self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
        ) -> bool: ...

        def _set_dirty(self, *regions: Region) -> None: ...

else:
    # Not a Widget: Textual takes a widget's CSS (its DEFAULT_CSS and type name) from its
    # first base that is a widget, which must stay the widget's own class.
    _Mixin = object


class GrowsInPlace(_Mixin):
    """Mixed into a widget (before its widget class): a gain in height keeps its lines."""

    _growing = False

    @property
    def grows_in_place(self) -> bool:
        """Whether a gain in height keeps the drawn lines and asks for no second layout now
        (a container whose children Textual lays out in two passes says no)."""
        return True

    def _size_updated(
        self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True
    ) -> bool:
        if not self.grows_in_place:
            return super()._size_updated(size, virtual_size, container_size, layout)
        old = self.outer_size
        self._growing = bool(old) and size.width == old.width and size.height >= old.height
        try:  # growing, `layout=False`: the layout that set this size already ran
            growing = self._growing
            return super()._size_updated(
                size, virtual_size, container_size, layout=layout and not growing
            )
        finally:
            self._growing = False

    def _set_dirty(self, *regions: Region) -> None:
        if self._growing and not regions:
            return  # taller, same width: the lines above are drawn as they were
        super()._set_dirty(*regions)
