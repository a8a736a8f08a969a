"""The help screen (`/help`, F1): the keys and the slash commands, on one page."""

from __future__ import annotations

from collections.abc import Mapping

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

from mm_tui.window.slash_commands import COMMANDS

#: (keys, what they do, the ids of the bindings they document). The help page and the README's
#: key table are both made from this (tests/window/test_help_keys.py checks the README and that
#: every binding with an id is here).
KEY_HELP: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Enter", "send the message (queued while a turn runs)", ()),
    ("Ctrl+J, Shift+Enter", "new line in the prompt", ("prompt.newline",)),
    ("Up, Down", "walk the prompt history (kept across runs)", ()),
    ("Tab", "complete a slash command; otherwise go to the newest tool row", ("prompt.complete",)),
    ("@", "attach a file: pick it by a few letters of its path", ()),
    (
        "!command",
        "run a shell command with the bash tool, same permissions as the model's; its output "
        "goes along with your next message",
        (),
    ),
    ("Ctrl+G", "edit the prompt in $VISUAL / $EDITOR", ("prompt.editor",)),
    (
        "a, s, r",
        "answer the question that has the focus: allow once, for the session (what s allows "
        "is shown), reject (r asks why: Enter rejects, the model reads the reason; Esc goes "
        "back). A question takes the keys when it appears, unless you typed in the prompt in "
        "the last second; keys in its first 0.4 s are typing, never an answer",
        (
            "question.allow_once",
            "question.allow_session",
            "question.reject",
            "question.reason_back",
        ),
    ),
    (
        "F2",
        "go to the open question (one that appeared while you typed waits for F2)",
        ("app.focus_question",),
    ),
    ("Enter, Space, click", "fold or unfold the focused tool row", ("row.toggle",)),
    ("Ctrl+O", "on a tool row: its whole output, full screen, with search", ("row.full_output",)),
    ("v", "on a repaired tool row: show what the model wrote", ("row.raw",)),
    (
        "PgUp, PgDn",
        "scroll the transcript from the prompt (Shift too); new output waits: ↓ N new",
        ("app.page_up", "app.page_down"),
    ),
    ("Ctrl+Home", "the top of the transcript", ("app.top",)),
    (
        "End, Ctrl+End",
        "the bottom again (End at the prompt line's end; sending does it too)",
        ("prompt.end", "app.bottom"),
    ),
    (
        "Esc",
        "interrupt the turn; queued messages are kept (/queue sends them, /queue clear drops them)",
        ("app.interrupt",),
    ),
    (
        "Alt+↑",
        "take the newest queued message back into the prompt to edit it",
        ("app.edit_queued",),
    ),
    (
        "Ctrl+P",
        "command palette: every command, yolo, model, resume, export, theme",
        ("app.command_palette",),
    ),
    ("Ctrl+C", "copy the selection, else interrupt the turn", ()),
    ("F1", "this help", ("app.help",)),
    ("Ctrl+Q", "quit (stops language servers and running commands)", ("app.quit",)),
)
KEYS: tuple[tuple[str, str], ...] = tuple((keys, does) for keys, does, _ in KEY_HELP)


def keys_markdown() -> str:
    """The README's key table, made from the same rows as the help page."""
    rows = ["| key | does |", "|---|---|"]
    rows += [f"| {keys} | {does} |" for keys, does in KEYS]
    return "\n".join(rows) + "\n"


def _table(title: str, rows: list[tuple[str, str]]) -> Table:
    """Two columns; a long description wraps inside its own column."""
    table = Table.grid(padding=(0, 2))
    table.title = title
    table.title_justify = "left"
    table.title_style = "bold"
    table.add_column(no_wrap=True, style="bold")
    table.add_column(ratio=1)
    for key, description in rows:
        table.add_row(Text(key), Text(description))  # `[name]` is not markup
    return table


def shown_rows(remapped: Mapping[str, str]) -> list[tuple[str, str]]:
    """The key rows, a row whose binding the `keymap` changed showing the keys in effect."""
    return [
        (
            ", ".join(remapped[i] for i in ids)
            if ids and all(i in remapped for i in ids)
            else keys,
            does,
        )
        for keys, does, ids in KEY_HELP
    ]


class HelpScreen(ModalScreen[None]):
    """Keys and commands; Esc, q or F1 closes it."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen #help-panel {
        width: 90;
        max-width: 90%;
        height: auto;
        max-height: 90%;
        border: round $accent;
        background: $surface;
        padding: 1 2;
    }
    HelpScreen #help-panel Static {
        margin: 0 0 1 0;
    }
    """

    BINDINGS = [Binding("escape,q,f1", "close", "Close", id="help.close")]

    def __init__(self, remapped: Mapping[str, str] | None = None) -> None:
        """`remapped`: binding id -> keys in effect, for the rows the keymap changed."""
        super().__init__()
        self.remapped = dict(remapped or {})

    def compose(self) -> ComposeResult:
        keys = _table("Keys", shown_rows(self.remapped))
        commands = _table(
            "Commands", [(command.usage, command.description) for command in COMMANDS]
        )
        with VerticalScroll(id="help-panel"):
            yield Static(Content.styled("mm-tui help", "bold"), id="help-title")
            yield Static(keys)
            yield Static(commands)
            yield Static(Content.styled("Esc closes this page.", "dim italic"))

    def action_close(self) -> None:
        """Close the page."""
        self.dismiss(None)
