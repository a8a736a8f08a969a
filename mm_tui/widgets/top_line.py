"""The top line: model, context used, working directory and server (the least needed last).

The model's name comes from the server (`GET /models`) and the server's address from a
config: both are drawn through the sanitizer, one line and bounded (no escapes).
"""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Static

from mm_tui.agent.port import TopLineView
from mm_tui.support.terminal_text import one_line

LABEL_CHARS = 80  # a model name or a server address longer than this is cut, counted


def short_path(path: Path) -> str:
    """The path with the home directory written `~`."""
    home = Path.home()
    try:
        return "~/" + str(path.relative_to(home)) if path != home else "~"
    except ValueError:
        return str(path)


def short_server(base_url: str) -> str:
    """`localhost:11434/v1`: the scheme says nothing the person needs."""
    return base_url.split("://", 1)[-1]


def short_count(tokens: int) -> str:
    """`950`, `12.3k`: token counts the eye reads at once."""
    return str(tokens) if tokens < 1000 else f"{tokens / 1000:.1f}k"


def context_text(used: int, window: int) -> str:
    """`context 1.2k/8.2k (15%)`, or just the count when the window is unknown."""
    if window <= 0:
        return f"context {short_count(used)}"
    percent = round(100 * used / window)
    return f"context {short_count(used)}/{short_count(window)} ({percent}%)"


def prompt_text(prompt: int, window: int) -> str:
    """`prompt 1.3k/8.2k`: what every request repeats, against the window served."""
    if window <= 0:
        return f"prompt {short_count(prompt)}"
    return f"prompt {short_count(prompt)}/{short_count(window)}"


def cache_text(percent: int) -> str:
    """`cache 92%`: the share of the last prompt the server reused, as it said."""
    return f"cache {percent}%"


CONTEXT_AMBER = 0.7  # of the window used: the context shows amber, then red
CONTEXT_RED = 0.9


def context_style(view: TopLineView) -> str:
    """ "" while there is room; amber, then red, as the context fills."""
    if view.window <= 0:
        return ""
    used = view.used / view.window
    if used >= CONTEXT_RED:
        return "bold $error"
    return "bold $warning" if used >= CONTEXT_AMBER else ""


class TopLine(Static):
    """Says where the person is: which model, which server, which directory, how full."""

    DEFAULT_CSS = """
    TopLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def show(self, view: TopLineView) -> None:
        """Redraw with the current values (called after each turn and each setting change)."""
        parts = [
            Content.styled("mm-tui", "bold $accent"),
            Content.styled(one_line(view.model, LABEL_CHARS) or "no model yet", "bold"),
            Content.styled(context_text(view.used, view.window), context_style(view)),
            *([Content(prompt_text(view.prompt, view.window))] if view.prompt else []),
            *([Content(cache_text(view.cache))] if view.cache is not None else []),
            Content(one_line(short_path(view.cwd))),
            Content(one_line(short_server(view.server), LABEL_CHARS)),
        ]
        if view.mode:
            parts.append(Content.styled(view.mode, "bold $warning"))
        self.update(
            Content(" · ").join(parts), layout=False
        )  # one row (its DEFAULT_CSS): no layout
