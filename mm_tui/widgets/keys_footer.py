"""The footer of keys, rebuilt only when the keys it shows change (issue 16).

Textual's `Footer` rebuilds all its key widgets after every `refresh_bindings` (a focus change,
a message queued, a turn started or ended; three at start-up alone): each rebuild mounts and
styles a dozen widgets and lays the screen out again, ~10 ms of the UI thread. At start-up
those fell while the core imports openai in its worker and delayed the first message's answer
by as much. This footer composes exactly what `Footer` composes, and skips a rebuild that
would show the same keys as the last one.
"""

from __future__ import annotations

from collections.abc import Hashable

from textual.app import ComposeResult
from textual.widgets import Footer

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

    async def recompose(self) -> None:
        # Asked after each change of the bindings; these keys may be on screen already.
        if self._shown is not None and self.is_attached and self._keys_shown() == self._shown:
            return
        await super().recompose()
