"""The empty transcript's first words: what the server check found, and how to begin.

A new user's first question is "is it working?": the window checks the server in a thread at
start and says, at once, the server and model (or the command that fixes them: start the
server, `ollama pull` a model) and the context, then a few hints for the first message.
Its `Checked` message goes on up to the window, which names the model on the top line at once
(the core picks it only at the first turn).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work
from textual.content import Content
from textual.message import Message
from textual.widgets import Static

from mm_tui.support.terminal_text import one_line

if TYPE_CHECKING:
    from mm_tui.agent.server_check import Finding, FirstRunCheck

log = logging.getLogger(__name__)

CHECKING = "checking the model server at {url}…"
CHECK_FAILED = "the server check failed: {error}"
HINTS: tuple[str, ...] = (
    "Ask about this project, e.g. “what does this project do?” or “run the tests and fix one”.",
    "@ attaches a file · /help lists the commands · F1 shows the keys",
)
MARKS = {"ok": ("✓", "$success"), "warning": ("!", "$warning"), "problem": ("✗", "$error")}

ServerCheck = Callable[[], "FirstRunCheck"]


class FirstRunPanel(Static):
    """Findings of the server check, then hints; built in a thread, shown as they come."""

    DEFAULT_CSS = """
    FirstRunPanel {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        border-left: thick $primary 50%;
    }
    """

    class Checked(Message):
        """The check's answer (from the worker thread); the window reads its model too."""

        def __init__(self, check: FirstRunCheck) -> None:
            super().__init__()
            self.check = check

    def __init__(self, check: ServerCheck, *, url: str) -> None:
        super().__init__(Content(one_line(CHECKING.format(url=url))), classes="first-run")
        self.check = check
        self.findings: list[Finding] | None = None

    def on_mount(self) -> None:
        # After the frame that shows "checking…": the check (urllib, its own imports) would
        # hold the GIL while the window draws its first frame.
        self.call_after_refresh(self._run_check)

    @work(thread=True, exit_on_error=False, group="first-run")
    def _run_check(self) -> None:
        try:
            check = self.check()
        except Exception as exc:  # a check must never take the window down
            log.debug("server check failed", exc_info=True)
            from mm_tui.agent.server_check import Finding, FirstRunCheck

            check = FirstRunCheck([Finding("server", "warning", CHECK_FAILED.format(error=exc))])
        self.post_message(self.Checked(check))

    def on_first_run_panel_checked(self, message: FirstRunPanel.Checked) -> None:
        self.findings = message.check.findings
        self.update(render_findings(message.check.findings))


def render_findings(findings: list[Finding]) -> Content:
    """One line per finding (a fix command indented below it), then the hints."""
    lines: list[Content] = []
    for finding in findings:
        mark, style = MARKS[finding.level]
        lines.append(Content.assemble((mark, f"bold {style}"), " ", one_line(finding.text)))
        if finding.fix:
            lines.append(Content.assemble("↳ run: ", (one_line(finding.fix), "bold")))
    if not any(f.level == "problem" for f in findings):
        lines.append(Content(""))
        lines.extend(Content.styled(hint, "dim") for hint in HINTS)
    return Content("\n").join(lines)
