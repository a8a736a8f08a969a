"""Every use of Textual's private API, fenced here (Textual is pinned exactly in pyproject).

No other module imports a private Textual module (`textual._x`, `textual.widgets._x`) or reads,
writes or overrides a member Textual names with a leading underscore: they call the small
functions and classes below. tests/architecture/test_textual_private.py checks both rules and
pins the shape of each private used here, so a Textual upgrade fails there first, naming what
moved. What each one is for:
- Textual's Markdown block classes (no public export for the list and table blocks), and a
  block's token, source document, child blocks, content and inline conversion: the compact
  lists, the aligned tables and the streamed answer draw with them.
- `FooterKey` and `Footer._pruning`: the keys footer patches its keys instead of rebuilding.
- `XTermParser`: the keys typed before the window started are parsed as the driver parses keys.
- `App._driver`: the only way to write an escape to the terminal (as `App.bell` does).
- `Widget._get_style`: a span's style resolved as `Content.render` resolves it.
- The styles cache's drawn rows: the streamed answer moves them when it scrolls in itself.
- `Widget._size_updated` / `Widget._set_dirty`: a widget growing at the bottom keeps its lines.
- `TextArea`'s cursor blink, `_on_key` and `_on_paste`: the prompt's own keys and blink.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from textual import events
from textual._xterm_parser import XTermParser
from textual.app import App
from textual.content import Content
from textual.driver import Driver
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Footer, TextArea
from textual.widgets._footer import FooterKey

if TYPE_CHECKING:
    from markdown_it.token import Token
    from textual.widgets._markdown import (
        MarkdownBlock,
        MarkdownBullet,
        MarkdownBulletList,
        MarkdownListItem,
        MarkdownOrderedList,
        MarkdownOrderedListItem,
        MarkdownParagraph,
        MarkdownTable,
        MarkdownTableContent,
        MarkdownTH,
    )

    class RowsUpdateHook(MarkdownTableContent):
        """Textual's table grid; `rows_updated` runs after Textual mounts streamed rows."""

        def rows_updated(self) -> None: ...


__all__ = [
    "FooterKey",
    "GrowsInPlace",
    "MarkdownBlock",
    "MarkdownBullet",
    "MarkdownBulletList",
    "MarkdownListItem",
    "MarkdownOrderedList",
    "MarkdownOrderedListItem",
    "MarkdownParagraph",
    "MarkdownTH",
    "MarkdownTable",
    "MarkdownTableContent",
    "RowsUpdateHook",
    "TextAreaHooks",
    "XTermParser",
    "app_driver",
    "block_markdown",
    "block_token",
    "child_blocks",
    "footer_pruning",
    "paragraph_content",
    "shift_drawn_rows",
    "span_style_resolver",
    "table_headers_and_rows",
    "token_converter",
]


# --- Markdown blocks -------------------------------------------------------------------------


def block_token(block: MarkdownBlock) -> Token:
    """The markdown-it token a block was made from."""
    return block._token  # pyright: ignore[reportPrivateUsage]


def block_markdown(block: MarkdownBlock) -> Any:
    """The `Markdown` widget a block belongs to."""
    return block._markdown  # pyright: ignore[reportPrivateUsage]


def child_blocks(block: MarkdownBlock) -> list[MarkdownBlock]:
    """The blocks a block holds before it composes them (the list itself: clearing it clears them)."""
    return block._blocks  # pyright: ignore[reportPrivateUsage]


def paragraph_content(block: MarkdownBlock) -> Content:
    """The content a block shows (set by `set_content`)."""
    return block._content  # pyright: ignore[reportPrivateUsage]


def token_converter(block: MarkdownBlock) -> Callable[[Token], Content]:
    """The block's conversion of an inline token to Content, as Textual draws it."""
    return block._token_to_content  # pyright: ignore[reportPrivateUsage]


def table_headers_and_rows(table: MarkdownTable) -> tuple[list[Content], list[list[Content]]]:
    """A table's header cells and rows, remembered where Textual's streaming update reads them."""
    headers, rows = table._get_headers_and_rows()  # pyright: ignore[reportPrivateUsage]
    table._headers = headers  # pyright: ignore[reportPrivateUsage]
    table._rows = rows  # pyright: ignore[reportPrivateUsage]
    return headers, rows


#: Textual's Markdown blocks, taken from its private module when first asked for: they bring
#: markdown-it, which the window's first frame does not need (a start-up test keeps it out).
_MARKDOWN_BLOCKS = frozenset(
    {
        "MarkdownBlock",
        "MarkdownBullet",
        "MarkdownBulletList",
        "MarkdownListItem",
        "MarkdownOrderedList",
        "MarkdownOrderedListItem",
        "MarkdownParagraph",
        "MarkdownTable",
        "MarkdownTableContent",
        "MarkdownTH",
    }
)


def __getattr__(name: str) -> type:
    if name in _MARKDOWN_BLOCKS:
        import textual.widgets._markdown as blocks

        return getattr(blocks, name)
    if name == "RowsUpdateHook":
        return _rows_update_hook()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@cache
def _rows_update_hook() -> type:
    """`RowsUpdateHook`, made when first asked for (its base is a Markdown block)."""
    from textual.widgets._markdown import MarkdownTableContent

    class RowsUpdateHook(MarkdownTableContent):
        async def _update_rows(self, updated_rows: list[list[Content]]) -> None:
            await super()._update_rows(updated_rows)  # pyright: ignore[reportPrivateUsage]
            self.rows_updated()

        def rows_updated(self) -> None:
            """Called after the streamed rows' cells are mounted."""

    return RowsUpdateHook


# --- Footer, driver, styles ------------------------------------------------------------------


def footer_pruning(footer: Footer) -> bool:
    """Whether the footer is being removed (a rebuild then is Textual's own)."""
    return footer._pruning  # pyright: ignore[reportPrivateUsage]


def app_driver(app: App[Any]) -> Driver | None:
    """The app's driver (Textual has no public way to write to the terminal)."""
    return app._driver  # pyright: ignore[reportPrivateUsage]


def span_style_resolver(widget: Widget) -> Callable[..., Any]:
    """How the widget resolves a span's style name, as `Content.render` does."""
    return widget._get_style  # pyright: ignore[reportPrivateUsage]


def shift_drawn_rows(widget: Widget, shift: int, stale: set[int]) -> None:
    """Repaint every row of `widget`, its lines moved up `shift` rows: the rows Textual drew
    already (its styles cache, by row) move with them, so only the rows that come are drawn,
    and those whose text changed (`stale`, rows before the move)."""
    cache = widget._styles_cache  # pyright: ignore[reportPrivateUsage]
    drawn: dict[int, Strip] = cache._cache  # pyright: ignore[reportPrivateUsage]
    dirty: set[int] = cache._dirty_lines  # pyright: ignore[reportPrivateUsage]
    kept = {y: strip for y, strip in drawn.items() if y not in stale and y not in dirty}
    widget.refresh()  # every row on screen (the terminal has no scroll region)
    rows = widget.size.height
    moved = {y - shift: strip for y, strip in kept.items() if 0 <= y - shift < rows}
    cache._cache = moved  # pyright: ignore[reportPrivateUsage]
    cache._dirty_lines = set(range(rows)).difference(moved)  # pyright: ignore[reportPrivateUsage]


# --- A widget that grows at the bottom -------------------------------------------------------

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
    """Mixed into a widget (before its widget class): a gain in height keeps its lines
    (the why: mm_tui/widgets/grows_in_place.py)."""

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


# --- TextArea's keys and cursor blink --------------------------------------------------------


class TextAreaHooks(TextArea):
    """`TextArea` with public-named hooks where Textual's are private."""

    def _restart_blink(self) -> None:
        self.blink_restarting()
        super()._restart_blink()

    def _toggle_cursor_blink_visible(self) -> None:
        if self.blink_may_toggle():
            super()._toggle_cursor_blink_visible()

    @property
    def cursor_visible_now(self) -> bool:
        """The cursor is drawn at this point of its blink."""
        return self._cursor_visible

    async def _on_key(self, event: events.Key) -> None:
        await self.key_pressed(event)

    async def _on_paste(self, event: events.Paste) -> None:
        self.text_pasted(event)

    def blink_restarting(self) -> None:
        """A key or focus restarts the cursor's blink (before Textual restarts it)."""

    def blink_may_toggle(self) -> bool:
        """Whether the cursor may blink now (False: it stays as it is)."""
        return True

    async def key_pressed(self, event: events.Key) -> None:
        """A key, before `TextArea` handles it; `text_area_key` is its handling."""
        await self.text_area_key(event)

    async def text_area_key(self, event: events.Key) -> None:
        """`TextArea`'s own handling of a key."""
        await super()._on_key(event)

    def text_pasted(self, event: events.Paste) -> None:
        """A paste, before `TextArea`'s own handler (dispatched after this) inserts it."""
