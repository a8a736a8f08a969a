"""The footer of keys, rebuilt only when the keys it shows change.

Textual's `Footer` rebuilds all its key widgets after every `refresh_bindings` (a focus change,
a message queued, a turn started or ended; three at start-up alone): each rebuild mounts and
styles a dozen widgets and lays the screen out again, ~10 ms of the UI thread. At start-up
those fell while the core imports openai in its worker and delayed the first message's answer
by as much. This footer composes exactly what `Footer` composes, skips a rebuild that would
show the same keys as the last one, and when keys come or go (`esc Interrupt` at each turn's
start and end) mounts and removes only those: a rebuild restyles every key (their `compact`
binding), ~6 ms of the UI thread a turn while the model streams. When the keys do not fit
the width, it draws them in Textual's compact style (one space less around each), so the
last key (`f1 Help`) is not cut while a question adds its three.
"""

from __future__ import annotations

from collections.abc import Hashable
from difflib import SequenceMatcher

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.compose import compose
from textual.widget import Widget
from textual.widgets import Footer

from mm_tui.widgets.textual_private import (  # FooterKey: what Footer.compose yields for a key
    FooterKey,
    footer_pruning,
)

__all__ = ["KeysFooter"]


class KeysFooter(Footer):
    """`Footer`, without the rebuilds that would draw the same keys again."""

    _shown: tuple[Hashable, ...] | None = None

    def _keys_shown(self) -> tuple[Hashable, ...]:
        """What `Footer.compose` draws from the screen's bindings: each shown binding (its key,
        action, description, group…), whether it is enabled, its tooltip and key display."""
        app = self.app
        keys = tuple(
            (binding, enabled, tooltip, app.get_key_display(binding))
            for (_, binding, enabled, tooltip) in self.screen.active_bindings.values()
            if binding.show
        )
        return (self.show_command_palette, self.combine_groups, keys)

    def compose(self) -> ComposeResult:
        drawn = 0
        for widget in super().compose():  # nothing until the screen's bindings are ready
            drawn += 1
            yield widget
        self._shown = self._keys_shown() if drawn else None
        self.call_after_refresh(self._fit)  # once the keys are mounted

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Compact when the keys, drawn in the roomy style, would not fit the width."""
        roomy = sum(  # " key " then "description "
            cell_len(key.key_display)
            + 2
            + (cell_len(key.description) + 1 if key.description else 0)
            for key in self.query_children(FooterKey)
        )
        if self.size.width:
            self.compact = roomy > self.size.width

    async def recompose(self) -> None:
        # Asked after each change of the bindings; these keys may be on screen already.
        if self._shown is None or not self.is_attached or footer_pruning(self):
            await super().recompose()
            return
        if self._keys_shown() == self._shown:
            return
        fresh = compose(self)  # what a rebuild would mount (and the grid's columns)
        if not await self._patch(fresh):
            await super().recompose()

    async def _patch(self, fresh: list[Widget]) -> bool:
        """Make the children `fresh`'s keys by removing and mounting the keys that differ;
        False (nothing done) when either holds anything but plain keys (a group of keys)."""
        old = [key for key in self.children if type(key) is FooterKey]
        new = [key for key in fresh if type(key) is FooterKey]
        if len(old) != len(self.children) or len(new) != len(fresh):
            return False
        matcher = SequenceMatcher(None, [_drawn(key) for key in old], [_drawn(key) for key in new],
                                  autojunk=False)  # fmt: skip
        gone: list[FooterKey] = []
        async with self.batch():
            for kind, old_start, old_end, new_start, new_end in matcher.get_opcodes():
                if kind == "equal":
                    continue
                gone += old[old_start:old_end]
                if new_start < new_end:
                    before = old[old_start] if old_start < len(old) else None
                    await self.mount(*new[new_start:new_end], before=before)
            if gone:
                await self.remove_children(gone)
        return True


def _drawn(key: FooterKey) -> tuple[Hashable, ...]:
    """What a footer key shows and does: two keys alike draw the same cells."""
    classes = frozenset(set(key.classes) - {"-compact"})  # set by its binding once mounted;
    # "-disabled" is a key not enabled
    return (key.key, key.key_display, key.description, key.action,
            str(key.tooltip or ""), classes)  # fmt: skip
