"""A streamed answer ends exactly as Textual's Markdown draws it whole, in every theme Textual
ships: light themes draw a list item's bullet and a quote's border in other colours than dark
ones, and ANSI themes draw fences without padding or background and a quote's border in the
terminal's own colour (once drawn in the dark themes' colours, they changed as the answer
ended)."""

from __future__ import annotations

import pytest
from textual.theme import BUILTIN_THEMES

from mm_tui.widgets.fast_markdown.answer_stream import AnswerStream
from mm_tui.widgets.fast_markdown.fast_answer import FastAnswerBlock
from tests.window.test_answer_stream import DOCUMENT, _Answers, _shown

pytestmark = pytest.mark.anyio

#: Every block the stream draws itself: headings of every level, lists nested and not (a
#: bullet drawn by compact_lists.py and one by Textual's MarkdownBullet), a fence, a quote, a
#: rule, indented code.
THEMED_DOCUMENT = DOCUMENT + "".join(f"\n{'#' * level} Level {level}\n" for level in range(2, 7))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_a_streamed_answer_ends_as_markdown_draws_it_whole_in_every_theme() -> None:
    app = _Answers()
    pieces = [THEMED_DOCUMENT[i : i + 7] for i in range(0, len(THEMED_DOCUMENT), 7)]
    differ: dict[str, list[int]] = {}
    async with app.run_test(size=(80, 90)) as pilot:
        app._pilot = pilot  # type: ignore[attr-defined]
        for theme in BUILTIN_THEMES:
            app.theme = theme
            whole = await _shown(app, FastAnswerBlock(THEMED_DOCUMENT), [])
            streamed_answer = FastAnswerBlock()
            streamed = await _shown(app, streamed_answer, pieces)
            # Still the stream's own drawing (an answer it cannot draw exactly is handed to
            # Textual's Markdown as it ends, which would make this comparison empty).
            assert [type(child) for child in streamed_answer.children] == [AnswerStream]
            if streamed != whole:
                rows = zip(whole, streamed, strict=False)  # a row count that differs shows too
                differ[theme] = [y for y, (a, b) in enumerate(rows) if a != b] + [
                    len(whole) - len(streamed)
                ]
    assert len(BUILTIN_THEMES) > 20
    assert differ == {}
