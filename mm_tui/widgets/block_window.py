"""A scrolling column of blocks of which only those near the view are mounted.

Textual lays out every mounted child on each change, so the cost of a frame would grow with the
session. The column holds its blocks in three parts:

    [records above] [mounted blocks] [records below] [the tail: mounted blocks]

- new blocks are queued and mounted in one batch per pass of the event loop;
- while the person follows the bottom, only the blocks of the view and a few lines above it
  (`FOLLOW_MARGIN`) stay mounted: once `FOLLOW_SLACK` more gathered, the oldest finished ones
  become records above (`archive.Archived`), like Toad's pruning; each take of a flood of
  rows then mounts and lays out a screenful of blocks, not hundreds;
- PageUp that would pass the top first brings `REVIVE_BATCH` records back, then turns the
  page (a whole page, as with everything mounted);
- reaching the top brings `REVIVE_BATCH` records back above, the view kept where it was; when
  that makes more than `LIVE_MOST` blocks mounted, the finished ones furthest below the view
  become records below, so scrolling through 5,000 rows never mounts 5,000 widgets;
- nearing those records below brings them back, dropping blocks far above again; new blocks
  still arrive at the end (the tail), after the records below;
- going back to the bottom (End, sending, the scrollbar's end) folds the mounted blocks and the
  records below into the records above, and shows the newest blocks.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.containers import VerticalScroll
from textual.message import Message
from textual.widget import Widget

from mm_tui.widgets.archive import Archivable, Archived

#: While the bottom is followed, the mounted blocks fill the view and this many lines above
#: it (lines as last laid out, a block not laid out yet counting one): room for the wheel to
#: scroll up to the top, where a batch comes back (`REVIVE_BATCH`) ...
FOLLOW_MARGIN = 6
#: ... and the older finished blocks leave once this many gathered (archiving happens once
#: in a while, not at every block).
FOLLOW_SLACK = 12
#: Blocks mounted at most once the person scrolled back (more on a tall screen).
LIVE_MOST = 160
#: Blocks brought back at a time when the person scrolls to the top (or down to the records
#: below).
REVIVE_BATCH = 60
#: Blocks mounted when a conversation is shown whole, or after a jump to the bottom; more
#: come back while they do not fill the view one and a half times (one-line rows).
OPEN_MOUNTED = 24
FILL_SCREENS = 1.5


class BlockWindow(VerticalScroll):
    """The mounted window over a long column of blocks; sticks to the bottom until the
    person scrolls up. Subclasses say which blocks are finished (`_settled`) and hear of
    blocks leaving and coming back (`_left`, `_came_back`)."""

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._archive: list[Archived] = []  # above the mounted blocks, oldest first
        self._below: list[Archived] = []  # between the mounted blocks and the tail
        self._gap: Widget | None = None  # the tail's first block (None: no tail yet)
        self._pending: list[Widget] = []
        self._busy = False  # a revive or a jump is under way
        self._scrolled_away = False
        self.new_below = 0  # blocks added below the view since the person scrolled up

    class NewBelow(Message):
        """How many blocks wait below the view (0: the person sees the bottom)."""

        def __init__(self, count: int) -> None:
            super().__init__()
            self.count = count

    # -- what subclasses say ------------------------------------------------------------

    def _settled(self, block: Widget) -> bool:
        """A block that can leave the layout (finished, not asking); focus is checked apart."""
        return isinstance(block, Archivable)

    def _left(self, block: Widget) -> None:
        """`block` was archived and unmounted."""

    def _came_back(self, record: Archived, block: Widget) -> None:
        """`record` was mounted again as `block`."""

    # -- following the bottom -----------------------------------------------------------

    def on_mount(self) -> None:
        self.anchor()

    def _set_new_below(self, count: int) -> None:
        if count != self.new_below:
            self.new_below = count
            self.post_message(self.NewBelow(count))

    @property
    def following(self) -> bool:
        """Whether the view follows the bottom (new output is seen as it comes).

        Not `is_vertical_scroll_end`: between a batch of blocks and the next layout the end
        moves away from the view while the anchor still follows it."""
        return not self._scrolled_away

    def release_anchor(self) -> None:
        super().release_anchor()  # the person scrolled (Textual calls this for them)
        self._scrolled_away = True

    def scroll_by_key(self, where: str) -> None:
        """PageUp/PageDown, Ctrl+Home, End from the prompt; End re-anchors to the bottom."""
        if where == "bottom":
            self._scrolled_away = False
            self.anchor()
            self._set_new_below(0)
            if self._below and not self._busy:
                self._busy = True
                self.call_later(self._jump_to_bottom)
            return
        self.release_anchor()  # new output no longer drags the view
        if where == "page_up":
            if self._archive and not self._busy and self.scroll_y < self.size.height:
                self._busy = True  # the page would pass the top: a batch comes back first
                self.call_later(self._revive_above, page_up=True)
            else:
                self.scroll_page_up(animate=False)
        elif where == "page_down":
            self.scroll_page_down(animate=False)
        elif where == "top":
            self.scroll_home(animate=False)

    def action_page_up(self) -> None:
        """PageUp on the focused transcript: as from the prompt (a whole page)."""
        self.scroll_by_key("page_up")

    def action_scroll_end(self) -> None:
        """End on the focused transcript: back to the newest blocks, as End from the prompt
        (an animated scroll would stop at the end of the mounted blocks, short of the records
        below)."""
        self.scroll_by_key("bottom")

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value >= self.max_scroll_y and not self._below:
            self._set_new_below(0)
        if not self._busy:  # a revive's own scrolls are not the person's (`_done` looks)
            self._bring_blocks_to_the_view(reached_top=new_value <= 0 < old_value)

    def _bring_blocks_to_the_view(self, *, reached_top: bool) -> None:
        """Records come back where the view went: above at the top, below near them; at the
        bottom the anchor holds again."""
        at_end = self.scroll_y >= self.max_scroll_y
        if self._scrolled_away and at_end:
            self._scrolled_away = False
        if not self._scrolled_away and not self._below:
            return
        if reached_top and self._archive:
            self._busy = True
            self.call_later(self._revive_above)
        elif self._below and (at_end or self._gap_y() < self.scroll_y + 2 * self.size.height):
            self._busy = True
            self.call_later(self._jump_to_bottom if at_end else self._revive_below)

    # -- mounting in batches and archiving ----------------------------------------------

    def _most(self) -> int:
        """Blocks mounted at most: `LIVE_MOST`, or more on a tall screen, so that one-line
        blocks still reach three screens beyond a revived batch (blocks leaving below are then
        always out of view, and reaching the records below never undoes a revive above)."""
        return max(LIVE_MOST, REVIVE_BATCH + 3 * self.size.height)

    def _follow_least(self) -> int:
        """Blocks that fill the view and `FOLLOW_MARGIN` lines whatever their height: new
        blocks beyond these need not be mounted at all while the bottom is followed."""
        return max(OPEN_MOUNTED, self.size.height + FOLLOW_MARGIN)

    def _follow_kept(self, blocks: Sequence[Widget]) -> int:
        """How many of the newest `blocks` fill the view and `FOLLOW_MARGIN` lines, by the
        sizes of the last layout (margins left out; a block not laid out yet counts one)."""
        lines, want = 0, self.size.height + FOLLOW_MARGIN
        for kept, block in enumerate(reversed(blocks)):
            if lines >= want and kept >= OPEN_MOUNTED:
                return kept
            lines += max(1, block.outer_size.height)
        return len(blocks)

    async def _add(self, block: Widget) -> None:
        """Queue a block; every block queued in this pass of the loop is mounted at once."""
        self._pending.append(block)
        if self._scrolled_away:  # the person reads further up: say what came below
            self._set_new_below(self.new_below + 1)
        if len(self._pending) == 1:
            self.call_later(self.flush)

    async def flush(self) -> None:
        """Mount the queued blocks now (archiving what the layout need not hold)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self.following and not self._below:
            # Blocks that would be archived right after mounting are archived unmounted, after
            # the mounted ones (older: they leave first, or the order would break).
            keep = len(pending) - self._follow_least()
            mounted = list(self.children)
            if keep > 0 and self._settled_prefix(mounted) == len(mounted):
                gone = self._settled_prefix(pending[:keep])
                if gone:
                    self._archive += self._to_records(mounted)
                    await self.remove_children(mounted)
                    self._archive += self._to_records(pending[:gone])
                    pending = pending[gone:]
        if self._below and self._gap is None:
            self._gap = pending[0]  # the tail starts here, after the records below
        await self.mount_all(pending)
        await self._prune()

    def _settled_prefix(self, blocks: Sequence[Widget], *, focus: bool = True) -> int:
        """How many of `blocks`, from the first, can leave the layout."""
        count = 0
        for block in blocks:
            if not self._settled(block) or (focus and block.has_focus_within):
                break
            count += 1
        return count

    def _to_records(self, blocks: Sequence[Widget]) -> list[Archived]:
        records: list[Archived] = []
        for block in blocks:
            assert isinstance(block, Archivable)  # `_settled` let only these through
            records.append(block.archived())
            self._left(block)
        return records

    def _window(self) -> list[Widget]:
        """The mounted blocks before the records below (all of them when there are none)."""
        children = list(self.children)
        if self._gap is None or self._gap not in children:
            return children
        return children[: children.index(self._gap)]

    async def _prune(self) -> None:
        """While the bottom is followed, the finished blocks above the view and its
        `FOLLOW_MARGIN` lines leave the layout (once `FOLLOW_SLACK` of them gathered)."""
        if not self.following or self._below:
            return
        children = list(self.children)
        kept = self._follow_kept(children)
        if len(children) <= kept + FOLLOW_SLACK:
            return
        old = children[: self._settled_prefix(children[: len(children) - kept])]
        if old:
            self._archive += self._to_records(old)
            await self.remove_children(old)

    def _revived(self, records: Sequence[Archived]) -> list[Widget]:
        blocks = [record.revive() for record in records]
        for record, block in zip(records, blocks, strict=True):
            self._came_back(record, block)
        return blocks

    # -- scrolling back -----------------------------------------------------------------

    def _gap_y(self) -> float:
        """Where the records below would be, in the column's coordinates."""
        if self._gap is not None and self._gap.is_mounted:
            return self._gap.virtual_region.y
        return self.virtual_size.height

    async def _revive_above(self, *, page_up: bool = False) -> None:
        """The newest records above come back above the first block, the view kept still
        (then a page up, for PageUp); the finished blocks furthest below then leave for the
        records below."""
        try:
            records = self._archive[-REVIVE_BATCH:]
            del self._archive[-REVIVE_BATCH:]
            first = self.children[0] if self.children else None
            offset = first.virtual_region.y - self.scroll_y if first is not None else 0.0
            await self.mount_all(self._revived(records), before=first)
            if first is not None:
                self.call_after_refresh(self._keep_view, first, offset)
            if page_up:
                self.call_after_refresh(self.scroll_page_up, animate=False)
            window = self._window()
            if len(window) > self._most():
                extra = window[self._most() :]
                gone = len(extra) - self._settled_prefix(extra[::-1], focus=False)
                leaving = extra[gone:]
                if leaving:
                    if self._gap is None and not self._below:
                        tail = self.children[len(window) :]
                        self._gap = tail[0] if tail else None
                    self._below[:0] = self._to_records(leaving)
                    await self._remove_out_of_view(leaving)
        finally:
            self.call_after_refresh(self._done)  # after the view is kept (`_keep_view`)

    async def _revive_below(self) -> None:
        """The oldest records below come back before the tail; blocks far above leave."""
        try:
            records = self._below[:REVIVE_BATCH]
            del self._below[:REVIVE_BATCH]
            await self.mount_all(self._revived(records), before=self._gap)
            if not self._below:
                self._gap = None
            window = self._window()
            if len(window) > self._most():
                far = window[: len(window) - self._most()]
                leaving = window[: self._settled_prefix(far, focus=False)]
                if leaving:
                    anchor = window[len(leaving)]
                    offset = anchor.virtual_region.y - self.scroll_y
                    self._archive += self._to_records(leaving)
                    await self._remove_out_of_view(leaving)
                    self.call_after_refresh(self._keep_view, anchor, offset)
        finally:
            self.call_after_refresh(self._done)

    def _done(self) -> None:
        """A revive ended, its view kept. Meanwhile End may have been pressed (it waited for
        this), or the person may have reached the top or the records below again: a scroll
        that arrived while `_busy` asked for nothing."""
        self._busy = False
        if self.following and self._below:
            self._busy = True
            self.call_later(self._jump_to_bottom)
        else:
            self._bring_blocks_to_the_view(reached_top=self.scroll_y <= 0)

    async def _remove_out_of_view(self, blocks: list[Widget]) -> None:
        """Unmount blocks far from the view; a focused one loses the focus first, so that
        Textual does not move it (and the view) to another block."""
        if any(block.has_focus_within for block in blocks):
            self.screen.set_focus(None)
        await self.remove_children(blocks)

    async def _jump_to_bottom(self) -> None:
        """Back to the bottom: the mounted blocks before the tail and the records below
        become records above; the newest blocks are mounted."""
        try:
            window = self._window()
            if self._settled_prefix(window, focus=False) < len(window):  # a block still runs
                await self.mount_all(self._revived(self._below), before=self._gap)
                self._below, self._gap = [], None
                return
            self._archive += self._to_records(window)
            self._archive += self._below
            self._below, self._gap = [], None
            await self._remove_out_of_view(window)
            room = max(0, OPEN_MOUNTED - len(self.children))
            records = self._archive[len(self._archive) - room :] if room else []
            del self._archive[len(self._archive) - len(records) :]
            first = self.children[0] if self.children else None
            await self.mount_all(self._revived(records), before=first)
            self._scrolled_away = False
            self.anchor()
            self.scroll_end(animate=False, immediate=True)
            self._set_new_below(0)
        finally:
            self._busy = False
        self.call_after_refresh(self._fill_view)

    async def _fill_view(self) -> None:
        """While the bottom is followed and the mounted blocks are too few to scroll up
        through, bring records back above (a screen of one-line rows would never reach the
        top to ask for them)."""
        if self._busy or self._below or not self.following or not self._archive:
            return
        if self.virtual_size.height >= FILL_SCREENS * self.size.height:
            return
        records = self._archive[-OPEN_MOUNTED:]
        del self._archive[-OPEN_MOUNTED:]
        first = self.children[0] if self.children else None
        await self.mount_all(self._revived(records), before=first)
        self.call_after_refresh(self._fill_view)

    def _keep_view(self, anchor: Widget, offset: float) -> None:
        """Scroll so that `anchor` is `offset` lines from the view's top, as before."""
        y = anchor.virtual_region.y - offset
        self.scroll_to(y=y, animate=False, immediate=True)

    # -- a finished conversation, export, clearing --------------------------------------

    async def show_records(self, records: list[Archived]) -> None:
        """Records of a finished conversation, above whatever is shown; only the newest
        `OPEN_MOUNTED` become widgets."""
        if self._archive or self._below:  # blocks left the layout: the past goes before them
            self._archive[:0] = records
            return
        split = max(0, len(records) - OPEN_MOUNTED)
        self._archive[:0] = records[:split]
        first = self.children[0] if self.children else None
        await self.mount_all(self._revived(records[split:]), before=first)
        if self.following:
            self.scroll_end(animate=False, immediate=True)
        self.call_after_refresh(self._fill_view)

    def blocks_in_order(self) -> list[Widget | Archived]:
        """Every block in order: records and widgets (the queued ones last)."""
        window = self._window()
        tail = list(self.children)[len(window) :]
        return [*self._archive, *window, *self._below, *tail, *self._pending]

    async def clear_blocks(self) -> None:
        """Forget every block."""
        self._archive.clear()
        self._below.clear()
        self._gap = None
        self._pending.clear()
        await self.remove_children()
        self._scrolled_away = False
        self.anchor()
        self._set_new_below(0)
