"""`/resume`'s picker: this directory's sessions, newest first — date, messages, size, and the
first message — filtered by typing; Enter goes on in one, Ctrl+F in a copy of it.

The list comes from the session index (no session file is opened to draw it). A directory
with thousands of sessions shows the newest `MAX_SHOWN` that match; typing narrows them. A
session another mm-tui writes is marked: choosing it opens a copy (the core says so).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from mm_tui.agent.session_index import SessionInfo
from mm_tui.support.terminal_text import literal
from mm_tui.widgets.option_moves import highlighted_id, move_highlight
from mm_tui.widgets.picker_look import picker_look
from mm_tui.window.session_intents import SessionChoice

PICKER_TITLE = "Resume a session: type to filter, Enter opens, Ctrl+F opens a copy, Esc cancels"
NO_MATCH = "no session matches"
NO_MESSAGE = "(no message yet)"
CURRENT = "◀ this session · "
IN_USE = "⚠ in use elsewhere: opens a copy · "
MAX_SHOWN = 200
FIRST_MESSAGE_SHOWN = 70


def local_time(stamp: float) -> str:
    """`2026-12-02 09:41` in the person's time zone."""
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def human_size(size: int) -> str:
    """`812 B`, `4.2 kB`, `12.0 MB`."""
    value = float(size)
    for unit in ("B", "kB", "MB"):
        if value < 1000:
            return f"{size} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    return f"{value:.1f} GB"


def session_line(info: SessionInfo, current: str, when: Callable[[float], str]) -> Content:
    """One row: when it was last used, its size, a mark, then its first message (literally;
    the row is one line, cut with `…` where the picker ends)."""
    first = literal(info.first_message).replace("\n", " ").strip() or NO_MESSAGE
    if len(first) > FIRST_MESSAGE_SHOWN:
        first = first[: FIRST_MESSAGE_SHOWN - 1] + "…"
    counts = f"{info.messages:>4} msg  {human_size(info.size):>8}"
    mark = CURRENT if info.id == current else IN_USE if info.in_use else ""
    return Content.assemble(
        (when(info.updated), "bold"), "  ", (counts, "dim"), "  ", (mark, "italic"), first
    )


class SessionPicker(ModalScreen[SessionChoice | None]):
    """Returns the chosen session (and whether to copy it), or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="sessions.cancel"),
        Binding("down", "move(1)", "Next", show=False, id="sessions.next"),
        Binding("up", "move(-1)", "Previous", show=False, id="sessions.previous"),
        Binding("ctrl+f", "fork", "Open a copy", priority=True, id="sessions.fork"),
    ]
    DEFAULT_CSS = (
        picker_look("SessionPicker")
        + """
    SessionPicker .picker.-wide {
        width: 120;  /* a date, counts and a first message per line */
    }
    SessionPicker #session-list {
        height: auto; max-height: 20; text-wrap: nowrap; text-overflow: ellipsis;
    }
    SessionPicker #session-query { margin: 1 0; background: $boost; }
    SessionPicker #session-note { color: $text-muted; }
    """
    )

    def __init__(
        self,
        sessions: Sequence[SessionInfo],
        current: str,
        *,
        when: Callable[[float], str] = local_time,
        blink: bool = True,
    ) -> None:
        """`when` writes a time (a fixed zone for snapshots); `blink`: the query's cursor."""
        super().__init__()
        self.sessions = list(sessions)
        self.current = current
        self.when = when
        self.blink = blink
        self._haystacks = [
            f"{when(s.updated)} {s.first_message} {s.id}".lower() for s in self.sessions
        ]

    def compose(self) -> ComposeResult:
        with Vertical(classes="picker -wide"):
            yield Static(Content.styled(PICKER_TITLE, "bold"))
            yield Input(
                placeholder="words of the first message, a date…", id="session-query", compact=True
            )
            yield OptionList(id="session-list", compact=True)
            yield Static(Content(""), id="session-note")

    def on_mount(self) -> None:
        query = self.query_one(Input)
        query.cursor_blink = self.blink
        query.focus()
        self._show_matches()

    @on(Input.Changed, "#session-query")
    def _show_matches(self) -> None:
        words = self.query_one(Input).value.lower().split()
        matches = [
            session
            for session, haystack in zip(self.sessions, self._haystacks, strict=True)
            if all(word in haystack for word in words)
        ]
        shown = matches[:MAX_SHOWN]
        option_list = self.query_one(OptionList)
        option_list.clear_options()
        option_list.add_options(
            Option(session_line(s, self.current, self.when), id=s.id) for s in shown
        )
        if shown:
            option_list.highlighted = 0
        total = len(self.sessions)
        if not shown:
            note = NO_MATCH
        elif len(matches) > len(shown):
            note = f"the newest {len(shown)} of {len(matches)} shown: type to narrow"
        else:
            note = f"{len(shown)} of {total} session(s)"
        self.query_one("#session-note", Static).update(Content(note))

    def _highlighted(self) -> str | None:
        return highlighted_id(self.query_one(OptionList))

    def action_move(self, step: int) -> None:
        """Up and Down move in the list while the query keeps the focus."""
        move_highlight(self.query_one(OptionList), step)

    @on(Input.Submitted, "#session-query")
    def _open_highlighted(self) -> None:
        if (session := self._highlighted()) is not None:
            self.dismiss(SessionChoice(session))

    @on(OptionList.OptionSelected)
    def _picked(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dismiss(SessionChoice(event.option.id))

    def action_fork(self) -> None:
        """Ctrl+F: go on in a copy of the highlighted session, the original left as it is."""
        if (session := self._highlighted()) is not None:
            self.dismiss(SessionChoice(session, fork=True))

    def action_cancel(self) -> None:
        """Stay in the session as it is."""
        self.dismiss(None)
