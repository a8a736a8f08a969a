"""The window's screen: the conversation's widgets (top line, transcript, slash menu, queue,
status line, prompt, footer) and what they send up that only moves them (scrolling, `↓ N new`,
a row's full output). The app applies the core's events to these widgets."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on
from textual.app import ComposeResult
from textual.screen import Screen
from textual.widget import Widget

from mm_tui.agent.events import ToolStatus
from mm_tui.widgets.keys_footer import KeysFooter
from mm_tui.widgets.permission import PROMPT_QUIET_SECONDS, PermissionQuestion
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.prompt_history import PromptHistory
from mm_tui.widgets.slash_menu import SlashMenu
from mm_tui.widgets.status_line import QueuedMessages, StatusLine
from mm_tui.widgets.tool_row import ToolRow
from mm_tui.widgets.top_line import TopLine
from mm_tui.widgets.transcript import Transcript

if TYPE_CHECKING:
    from textual.app import App

    from mm_tui.widgets.output_viewer import OutputViewer


class WindowScreen(Screen[None]):
    """The window's screen: the prompt has the focus from the start, so the keys typed while
    the window starts go into it (Textual focused the transcript first, the first focusable).

    `full_output(call_id)`: the core's kept copy of a call's whole output (Ctrl+O on a row)."""

    DEFAULT_CSS = """
    WindowScreen {
        layout: vertical;
    }
    """

    AUTO_FOCUS = "#prompt"

    def __init__(
        self,
        history: PromptHistory,
        cwd: Path,
        *,
        preview_lines: int,
        clock: Callable[[], float],
        full_output: Callable[[str], str | None],
    ) -> None:
        super().__init__(id="_default")
        self.history = history
        self.cwd = cwd
        self.preview_lines = preview_lines
        self.clock = clock
        self.full_output = full_output

    def conversation(self) -> ComposeResult:
        """The conversation's widgets. The app's `compose` yields them, into this screen:
        Textual mounts what the app composes before the app's `Mount`, where the prompt gets
        its cursor and the core starts, and what a screen composes only after it."""
        yield TopLine(id="top-line")
        yield Transcript(preview_lines=self.preview_lines, clock=self.clock)
        yield SlashMenu(id="slash-menu")
        yield QueuedMessages(id="queue")
        yield StatusLine(id="status-line")
        yield PromptInput(self.history, root=self.cwd, id="prompt", clock=self.clock)
        yield KeysFooter(show_command_palette=False)

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

    @on(PermissionQuestion.Shown)
    def _question_shown(self, message: PermissionQuestion.Shown) -> None:
        """A question appeared: it takes the keys, unless the person typed into the prompt
        in the last moment, looks at another screen, or answers another question (then it
        waits for F2, and the keys stay where they are)."""
        prompt = self.query_one(PromptInput)
        if (
            self.app.screen is self
            and not prompt.typed_within(PROMPT_QUIET_SECONDS)
            and _asking(self.focused) is None
        ):
            message.question.take_keys()

    def question_closed(self, call_id: str) -> None:
        """The question of `call_id` was answered or settled: if it had the keys, the next
        open question takes them (with its own guard), else the prompt has them again."""
        focused = self.focused
        asking = _asking(focused)
        if focused is not None and (asking is None or asking.request.call_id != call_id):
            return  # the keys were elsewhere: they stay there
        for question in self.query(PermissionQuestion):
            if question.request.call_id != call_id and not question.request.future.done():
                question.take_keys()
                return
        self.set_focus(self.query_one(PromptInput))

    @on(ToolRow.OutputRequested)
    def _open_output(self, message: ToolRow.OutputRequested) -> None:
        """Ctrl+O on a row: its whole output, full screen."""
        from mm_tui.widgets.output_viewer import viewer_for_row

        row, running = message.row, message.row.status is ToolStatus.RUNNING
        kept = None if running else self.full_output(row.call_id)
        self.app.push_screen(
            viewer_for_row(row.call_id, row.title, row.output, kept, running=running)
        )


def _asking(focused: Widget | None) -> PermissionQuestion | None:
    """The question that has the focus (itself, or its reason's line), if any."""
    if focused is None:
        return None
    for node in focused.ancestors_with_self:
        if isinstance(node, PermissionQuestion):
            return node
    return None


def open_viewer(app: App[int]) -> OutputViewer | None:
    """The full-output viewer when it is the screen shown (its module is imported with the
    first one opened, not at start-up)."""
    if "mm_tui.widgets.output_viewer" not in sys.modules:
        return None
    from mm_tui.widgets.output_viewer import OutputViewer

    screen = app.screen
    return screen if isinstance(screen, OutputViewer) else None
