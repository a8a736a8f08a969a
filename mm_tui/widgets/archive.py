"""A finished block taken out of the live layout: its Markdown and the recipe to draw it again.

Textual lays out every mounted widget of the transcript on each change, so a long session
costs more per frame the longer it gets. The transcript keeps only its newest blocks mounted
(Toad prunes its conversation the same way) and archives the older ones as these small records:
plain data, no widget, re-created when the person scrolls back to them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class Archived:
    """One block out of the layout: what `/export` writes, and how to mount it again."""

    markdown: str
    revive: Callable[[], Widget]
    call_id: str | None = None  # a tool row's, so the transcript finds it again once revived


@runtime_checkable
class Archivable(Protocol):
    """A block that can leave the layout and come back the same."""

    def archived(self) -> Archived: ...
