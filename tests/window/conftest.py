"""Window test fixtures: deterministic apps, event playing, and snapshots kept in `snapshots/`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_textual_snapshot import SVGImageExtension
from syrupy.assertion import SnapshotAssertion
from textual.pilot import Pilot

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.widgets.permission import PermissionQuestion, RejectionReason

SNAPSHOT_DIR = Path(__file__).resolve().parents[2] / "snapshots"
FIXED_CWD = Path("/home/dev/greeter")
FIXED_TIME = 1000.0


class TopLevelSnapshots(SVGImageExtension):
    """pytest-textual-snapshot's SVGs, in `snapshots/<test module>/` at the repository's top.

    syrupy relates a snapshot to its test by the module's name in the path, so it stays.
    """

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(SNAPSHOT_DIR / test_location.basename)


class _ReroutedSnapshot:
    """`snap_compare` asks for `SVGImageExtension`; it gets the top-level-folder variant."""

    def __init__(self, inner: SnapshotAssertion) -> None:
        self._inner = inner

    def use_extension(self, extension_class: Any = None) -> SnapshotAssertion:
        if extension_class is SVGImageExtension:
            extension_class = TopLevelSnapshots
        return self._inner.use_extension(extension_class)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> Any:
    """syrupy's fixture, rerouted so `pytest --snapshot-update` writes to `snapshots/`."""
    return _ReroutedSnapshot(snapshot)


@pytest.fixture
def anyio_backend() -> str:
    """Pilot tests run on asyncio, as Textual does."""
    return "asyncio"


@pytest.fixture(autouse=True)
def _private_data_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions, prompt history and a saved theme of a test stay in its own temporary folder."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def still_app(tmp_path: Path) -> Iterator[Callable[..., MMApp]]:
    """Build an app with no agent, a fixed clock and no motion (for snapshots)."""

    def build(config: Config | None = None, **options: Any) -> MMApp:
        options.setdefault("history_path", tmp_path / "history.jsonl")
        options.setdefault("clock", lambda: FIXED_TIME)
        options.setdefault("still", True)
        return MMApp(
            config or Config(model="qwen2.5-coder:14b", context_window=8192), FIXED_CWD, **options
        )

    yield build


def agent_of(app: MMApp) -> Agent:
    """The live Agent behind the app's port (a test's view past the seam)."""
    port = app.turns.port
    assert isinstance(port, Agent), "the agent is not ready"
    return port


async def play(pilot: Pilot[Any], events: Iterable[Any]) -> None:
    """Send events through the app's sink, as the core does, and wait until they are shown."""
    app = pilot.app
    assert isinstance(app, MMApp)
    for event in events:
        app.bridge(event)
    await wait_for(pilot, lambda: not app.events_waiting, "the events are taken")
    await settle(pilot)


async def settle(pilot: Pilot[Any]) -> None:
    """Let queued messages, mounts and Markdown streams finish."""
    for _ in range(4):
        await pilot.pause()


async def wait_for(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until `condition` holds; fail naming `what` if it never does.

    The bound is generous and only stops a broken test from hanging: nothing is timed.
    """
    for _ in range(1500):
        if condition():
            return
        await pilot.pause(0.02)
    raise AssertionError(f"never happened: {what}")


async def answer(pilot: Pilot[Any], key: str) -> None:
    """Answer the open question deliberately, as the person does: F2 goes to the question
    (whether it took the keys or waits: F2 is deliberate, its keys answer at once), then its
    key (`r` opens the reason's line: Enter rejects without one)."""
    app = pilot.app
    await wait_for(pilot, lambda: bool(app.query(PermissionQuestion)), "a question is shown")
    question = app.query(PermissionQuestion).first()
    await pilot.press("f2")
    await wait_for(pilot, lambda: question.has_focus, "the question has the focus")
    await pilot.press(key)
    if key == "r":
        await wait_for(pilot, lambda: bool(question.query(RejectionReason)), "the reason line")
        await pilot.press("enter")


async def send(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into the prompt and press Enter, as the person does."""
    app = pilot.app
    assert isinstance(app, MMApp)
    prompt = app.query_one("#prompt")
    prompt.focus()
    prompt.insert(text)  # type: ignore[attr-defined]
    await pilot.press("enter")
    await pilot.pause()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project the tools work in."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "greeter.py").write_text(
        'def greet(name: str) -> str:\n    return f"Hello, {name[0].upper()}{name[1:]}!"\n'
    )
    return root


class HandClock:
    """A clock the test moves by hand (`now`, `advance`): no waiting on real time."""

    def __init__(self, now: float = FIXED_TIME) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def live_app(model_server: Any, project: Path, tmp_path: Path) -> Iterator[Callable[..., MMApp]]:
    """Build an app driving the real Agent against the scripted model server (`clock`: the
    window's clock, e.g. a `HandClock`; the real one by default)."""
    agents: list[Any] = []

    def build(clock: Callable[[], float] | None = None, **config_options: Any) -> MMApp:
        config_options.setdefault("permissions", "ask")
        config = Config(
            base_url=model_server.base_url,
            model="scripted-model",
            lsp_servers=(),
            **config_options,
        )

        def factory(sink: Callable[[Any], None]) -> Any:
            agent = Agent(config, sink, project, retry_delays=())
            agents.append(agent)
            return agent

        return MMApp(
            config,
            project,
            agent_factory=factory,
            history_path=tmp_path / "history.jsonl",
            **({"clock": clock} if clock is not None else {}),
        )

    yield build
    for agent in agents:
        agent.close()
