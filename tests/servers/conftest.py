"""Every test here runs once per emulator of the server zoo."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.agent.conftest import make_agent  # noqa: F401 - a fixture, re-exported
from tests.servers.zoo import ZOO, Emulator


@pytest.fixture(params=ZOO, ids=[emulator.name for emulator in ZOO])
def emulator(request: pytest.FixtureRequest) -> Iterator[Emulator]:
    with request.param() as running:
        yield running


@pytest.fixture
def anyio_backend() -> str:
    """The window's tests run on asyncio, as Textual does."""
    return "asyncio"
