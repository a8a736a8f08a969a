"""Project-wide fixtures: a scripted OpenAI-compatible model server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from scripted_server import ScriptedServer
from tests.tmux_session import tmux_server

#: Variables of the terminal the suite happens to run in that change what mm-tui writes
#: (tmux's passthrough, screen's, colour): a test that wants one sets it itself.
TERMINAL_VARIABLES = ("TMUX", "TMUX_PANE", "STY", "NO_COLOR", "FORCE_COLOR", "TERM_PROGRAM")


@pytest.fixture(autouse=True)
def _not_the_runners_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test sees the same terminal, whether pytest runs in tmux, screen or a pipe."""
    for name in TERMINAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def model_server() -> Iterator[ScriptedServer]:
    """A ScriptedServer speaking the openai dialect, stopped after the test."""
    with ScriptedServer(dialect="openai") as server:
        yield server


@pytest.fixture
def scripted_server_factory() -> Iterator[Callable[..., ScriptedServer]]:
    """Start servers of any dialect (`factory("ollama")`); all are stopped after the test."""
    started: list[ScriptedServer] = []

    def start(dialect: str = "openai", port: int = 0) -> ScriptedServer:
        server = ScriptedServer(dialect=dialect, port=port).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def tmux() -> Iterator[Callable[..., str]]:
    """A private tmux server (`tests/tmux_session.py`), killed after the test."""
    yield from tmux_server()


@pytest.fixture
def own_markdown(monkeypatch: pytest.MonkeyPatch) -> None:
    """mm-tui's own drawing of answers, whatever `MM_TUI_MARKDOWN` says: for the tests of that
    drawing (the window's other tests run with either; `.ci/run` runs them both ways)."""
    from mm_tui.widgets.markdown_choice import ENV, OWN

    monkeypatch.setenv(ENV, OWN)
