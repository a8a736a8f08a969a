"""The window's keys beyond the turns: scrolling the transcript from the prompt, pastes that
land in the prompt, and the full output of a row (issue 14).

A base class of `MMApp` (Textual merges the BINDINGS of every App class in the chain), so the
app module keeps to drawing the core's events.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from textual import events, on
from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding

from mm_tui.agent.events import ToolStatus
from mm_tui.widgets.prompt import PromptInput, remember_paste
from mm_tui.widgets.status_line import StatusLine
from mm_tui.widgets.tool_row import ToolRow
from mm_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from mm_tui.widgets.output_viewer import OutputViewer


class WindowKeys(App[int]):
    """Scrollback keys that work while the prompt has the focus, pastes, Ctrl+O."""

    BINDINGS = [
        Binding(
            "pageup,shift+pageup",
            "scroll_transcript('page_up')",
            "Page up",
            show=False,
            priority=True,
            id="app.page_up",
        ),
        Binding(
            "pagedown,shift+pagedown",
            "scroll_transcript('page_down')",
            "Page down",
            show=False,
            priority=True,
            id="app.page_down",
        ),
        Binding(
            "ctrl+home", "scroll_transcript('top')", "Top", show=False, priority=True, id="app.top"
        ),
        Binding(
            "ctrl+end",
            "scroll_transcript('bottom')",
            "Bottom",
            show=False,
            priority=True,
            id="app.bottom",
        ),
    ]

    def full_output(self, call_id: str) -> str | None:
        """The core's kept copy of a call's output (the app answers through its port)."""
        raise NotImplementedError

    def action_scroll_transcript(self, where: str) -> None:
        """PageUp/PageDown (with or without Shift), Ctrl+Home/End, End: move the transcript.

        On another screen (a viewer, a picker) the key goes on to that screen.
        """
        if len(self.screen_stack) != 1:
            raise SkipAction()
        self.query_one(Transcript).scroll_by_key(where)

    @on(Transcript.NewBelow)
    def _new_below(self, message: Transcript.NewBelow) -> None:
        """`↓ N new` on the status line while the person reads further up (none when the
        window closes: blocks may still arrive while it is taken down)."""
        for status in self.query(StatusLine):
            status.new_below = message.count

    @on(PromptInput.BottomRequested)
    def _back_to_bottom(self) -> None:
        """End at the end of the prompt's line: the transcript returns to the bottom."""
        self.query_one(Transcript).scroll_by_key("bottom")

    def on_paste(self, event: events.Paste) -> None:
        """A paste while a row has the focus goes to the prompt too."""
        prompt = self.query_one(PromptInput)
        focused = self.focused
        # No focus yet (start-up): the screen hands the paste to the prompt itself.
        if focused is not None and focused is not prompt and len(self.screen_stack) == 1:
            event.stop()
            prompt.focus()
            remember_paste(prompt.pastes, event.text)
            prompt.insert(event.text)

    def open_viewer(self) -> OutputViewer | None:
        """The full-output viewer when it is the screen shown (its module is imported with
        the first one opened, not at start-up)."""
        if "mm_tui.widgets.output_viewer" not in sys.modules:
            return None
        from mm_tui.widgets.output_viewer import OutputViewer

        screen = self.screen
        return screen if isinstance(screen, OutputViewer) else None

    @on(ToolRow.OutputRequested)
    def _open_output(self, message: ToolRow.OutputRequested) -> None:
        """Ctrl+O on a row: its whole output, full screen."""
        from mm_tui.widgets.output_viewer import viewer_for_row

        row, running = message.row, message.row.status is ToolStatus.RUNNING
        kept = None if running else self.full_output(row.call_id)
        self.push_screen(viewer_for_row(row.call_id, row.title, row.output, kept, running=running))
