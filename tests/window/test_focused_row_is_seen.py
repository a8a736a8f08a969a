"""A focused tool row is plainly seen in every theme: its background stands apart from the
transcript's (it was 234 on 233 with `$boost`)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.window.conftest import play, settle
from tests.window.window_scenes import finished_rows_in_every_status

pytestmark = pytest.mark.anyio

#: The least distance between a focused row's colour and what is behind it, as a share of
#: the RGB cube's diagonal (black to white is 1).
SEEN = 0.08


def distance(one: Any, other: Any) -> float:
    return sum((a - b) ** 2 for a, b in zip(one.rgb, other.rgb, strict=True)) ** 0.5 / 441.7


async def test_a_focused_row_stands_apart_in_every_theme(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await play(pilot, finished_rows_in_every_status())
        row = app.transcript.rows["done"]
        row.focus()
        await settle(pilot)
        faint = []
        for theme in sorted(app.available_themes):
            app.theme = theme
            await settle(pilot)
            behind, own = row.background_colors
            if distance(own, behind) < SEEN:
                faint.append(f"{theme}: {own.hex} on {behind.hex}")
        assert faint == []
