"""Which widget draws the model's answer: mm-tui's own drawing or Textual's stock Markdown.

mm-tui draws a streaming answer itself (the `fast_markdown` package, docs/decisions/0003): Textual's
`Markdown` and `MarkdownStream` parse and lay out the whole growing document again as it
streams. That drawing leans on Textual internals (fenced in `textual_private.py`); when a
Textual upgrade breaks them, `MM_TUI_MARKDOWN=stock` draws every answer with Textual's own
`Markdown`/`MarkdownStream` instead, and the window's tests run the same way with it
(`.ci/run` runs them both ways).
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

ENV = "MM_TUI_MARKDOWN"
STOCK = "stock"
OWN = "own"


def stock_markdown() -> bool:
    """Whether answers are drawn by Textual's stock `Markdown` (read at each new answer, so a
    test may set it)."""
    choice = os.environ.get(ENV, "").strip().lower()
    if choice not in ("", STOCK, OWN):
        log.warning("%s=%r is neither %r nor %r: mm-tui draws its own", ENV, choice, STOCK, OWN)
    return choice == STOCK
