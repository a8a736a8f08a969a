"""How the window gets its port to the core: the live Agent, or a replay source.

A factory takes the window's sink and returns an `AgentPort`; the app calls it in a worker
(the Agent imports openai and asks the server for its context window) or at mount (a replay).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mm_tui.agent.events import EventSink
from mm_tui.agent.port import AgentPort, TopLineView
from mm_tui.support.url_text import shown_url

if TYPE_CHECKING:
    from mm_tui.agent.config import Config

PortFactory = Callable[[EventSink], AgentPort]


def live_factory(
    config: Config, cwd: Path, resume: Path | str | None = None, continue_last: bool = False
) -> PortFactory:
    """Builds the real Agent (imported only then: it pulls in openai)."""

    def factory(sink: EventSink) -> AgentPort:
        from mm_tui.agent.agent import Agent

        session = str(resume) if resume is not None else None
        agent = Agent(config, sink, cwd, resume=session, continue_last=continue_last)
        # Import openai (0.3 s, seconds on a loaded machine) and build its client here, in the
        # worker right after the first frame, so the first message does not wait for it.
        _ = agent.client.client
        return agent

    return factory


def replay_port_factory(config: Config, cwd: Path, replay: Path | None) -> PortFactory:
    """Plays `replay` (the bundled demo when None); raises `ReplayError` in one line."""
    from mm_tui.replay import demo_path, load_replay
    from mm_tui.window.replay_source import replay_factory

    events, meta = load_replay(replay if replay is not None else demo_path())
    window = config.context_window or 0
    return replay_factory(events, meta, cwd=cwd, context_window=window)


def config_view(config: Config, cwd: Path) -> TopLineView:
    """What the top line shows before the core is ready: the config's model, server, yolo."""
    return TopLineView(
        model=config.model or "",
        server=shown_url(config.base_url),
        cwd=cwd,
        used=0,
        window=config.context_window or 0,
        mode="yolo" if config.yolo else "",
    )
