"""Telling the person, away in another window, that mm-tui waits for them.

When a turn ends or a question waits while the terminal is unfocused (Textual's AppBlur and
AppFocus, from the terminal's focus reports), the window rings the bell and sends a desktop
notification escape: OSC 9 (iTerm2, kitty, WezTerm, Ghostty, Windows Terminal) and/or OSC 777
(`notify`: foot, urxvt, WezTerm, Ghostty, VTE with the patch). A terminal that knows neither
ignores the sequence. Inside tmux the OSC is wrapped in tmux's passthrough (shown when tmux has
`allow-passthrough on`; the bell needs nothing). `notifications:` in the config chooses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from mm_tui.agent.config.model import Notifications
from mm_tui.support.terminal_text import first_line

TITLE = "mm-tui"
TURN_DONE = "the turn is done"
TURN_FAILED = "the turn ended: {reason}"
QUESTION_WAITS = "waiting for your answer: {what}"
MAX_BODY = 160
BELL = "\x07"


def _osc(body: str, *, in_tmux: bool) -> str:
    sequence = f"\x1b]{body}\x07"
    if in_tmux:  # DCS passthrough: every ESC inside doubled
        return "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


def notification_escapes(settings: Notifications, text: str, *, in_tmux: bool = False) -> str:
    """What to write to the terminal for one notification (empty when it is all off)."""
    body = first_line(text).replace("…", "").strip()[:MAX_BODY] or TITLE
    body = body.replace(";", ",")  # OSC 777's fields are separated by `;`
    out = BELL if settings.bell else ""
    if settings.desktop in ("osc9", "both"):
        out += _osc(f"9;{TITLE}: {body}", in_tmux=in_tmux)
    if settings.desktop in ("osc777", "both"):
        out += _osc(f"777;notify;{TITLE};{body}", in_tmux=in_tmux)
    return out


class Notifier:
    """Sends a notification when the terminal is not focused; the app calls it on events."""

    def __init__(
        self,
        settings: Notifications,
        write: Callable[[str], None],
        focused: Callable[[], bool],
        env: Mapping[str, str],
    ) -> None:
        self.settings = settings
        self.write = write
        self.focused = focused
        self.in_tmux = bool(env.get("TMUX"))

    def notify(self, text: str) -> bool:
        """Send `text` unless the person is looking; whether anything was written."""
        if self.focused():
            return False
        escapes = notification_escapes(self.settings, text, in_tmux=self.in_tmux)
        if escapes:
            self.write(escapes)
        return bool(escapes)
