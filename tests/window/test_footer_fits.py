"""The footer of keys never cuts its last key: when the keys do not fit the width (a question
adds its a/s/r), they are drawn in Textual's compact style; when they fit, in the roomy one."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from mm_tui.agent.events import PermissionAnswer
from mm_tui.widgets.keys_footer import KeysFooter
from mm_tui.widgets.textual_private import FooterKey
from tests.window import window_scenes as scenes
from tests.window.conftest import play, wait_for

pytestmark = pytest.mark.anyio


def _keys(app: Any) -> list[str]:
    """The descriptions of the keys drawn whole inside the footer."""
    footer = app.query_one(KeysFooter)
    return [
        key.description
        for key in footer.query(FooterKey)
        if key.region.width and key.region.right <= footer.region.right
    ]


@pytest.mark.parametrize(("width", "compact"), [(100, True), (160, False)])
async def test_with_a_question_open_the_last_key_is_whole(
    still_app: Any, width: int, compact: bool
) -> None:
    app = still_app()
    async with app.run_test(size=(width, 20)) as pilot:
        await play(pilot, scenes.permission_question(Future[PermissionAnswer]()))
        await wait_for(pilot, lambda: "Allow once" in _keys(app), "the question's keys")
        await wait_for(pilot, lambda: app.query_one(KeysFooter).compact is compact, "the fit")
        await pilot.pause()
        assert _keys(app)[-1] == "Help"
        assert _keys(app) == [key.description for key in app.query(FooterKey)]  # all whole


async def test_without_a_question_the_keys_stay_roomy(still_app: Any) -> None:
    app = still_app()
    async with app.run_test(size=(100, 20)) as pilot:
        await play(pilot, [])
        await wait_for(pilot, lambda: "Help" in _keys(app), "the keys")
        await pilot.pause()
        assert app.query_one(KeysFooter).compact is False
