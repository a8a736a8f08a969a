"""A finished block out of the live layout: a small record that says its Markdown and can
draw the block again.

Textual lays out every mounted widget of the transcript on each change, so a long session
costs more per frame the longer it gets. The transcript keeps only the blocks near the view
mounted (Toad prunes its conversation the same way) and holds the others as records: plain
data, no widget, re-created when the person scrolls back to them. A resumed or replayed
conversation is built as records straight away (`past_blocks`), never as widgets first.

Records hold references, not copies: a row's output is the very string of the session's
message, and the Markdown for `/export` is made only when asked.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from textual.widget import Widget


class Archived(Protocol):
    """One block out of the layout: what `/export` writes, and how to mount it again."""

    @property
    def call_id(self) -> str | None:
        """A tool row's call id (the transcript finds the row again once revived), else None."""
        ...

    def markdown(self) -> str:
        """The block for `/export`."""
        ...

    def revive(self) -> Widget:
        """A new widget showing the block as it was."""
        ...


@runtime_checkable
class Archivable(Protocol):
    """A block that can leave the layout and come back the same."""

    def archived(self) -> Archived: ...
