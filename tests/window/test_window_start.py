"""Start-up: the core is built in a worker begun by the first frame, a message sent
before it is ready waits for it and is answered, and the footer is rebuilt only when its keys
change. Nothing here is timed: the order of what happens is observed."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.widgets import Footer

from mm_tui.agent.config import Config
from mm_tui.agent.port import AgentPort
from mm_tui.app import MMApp
from mm_tui.app_parts.start import collector_paused
from mm_tui.support.collector import YOUNG_COLLECTION
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import UserMessage
from mm_tui.widgets.keys_footer import KeysFooter
from mm_tui.widgets.prompt import PromptInput
from mm_tui.widgets.status_line import QueuedMessages
from mm_tui.window.ports import PortFactory, live_factory
from scripted_server import Reply
from tests.window.conftest import FIXED_CWD, send, settle, wait_for
from tests.window.test_window_conversation import turn_over

pytestmark = pytest.mark.anyio


class FramesSeen(MMApp):
    """The window, noting each frame it draws and whether the core's build had begun then.

    `_display` is what Textual calls with each frame it draws (the benches time frames there)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frames_seen: list[bool] = []  # per frame: had the core's build been started?

    def _display(self, screen: Any, renderable: Any) -> None:
        if renderable is not None:
            self.frames_seen.append(self.core_thread is not None)
        super()._display(screen, renderable)


class HeldFactory:
    """A port factory that notes the thread and the frames drawn when it is called, then
    holds the build until the test lets it go (a core still importing openai)."""

    def __init__(self, factory: PortFactory, app: Callable[[], FramesSeen]) -> None:
        self.factory = factory
        self.app = app
        self.called = threading.Event()
        self.release = threading.Event()
        self.thread: threading.Thread | None = None
        self.frames_before = -1

    def __call__(self, sink: Any) -> AgentPort:
        self.thread = threading.current_thread()
        self.frames_before = len(self.app().frames_seen)
        self.called.set()
        assert self.release.wait(30), "the test never let the core's build go"
        return self.factory(sink)


def live_window(server: Any, project: Path, tmp_path: Path) -> tuple[FramesSeen, HeldFactory]:
    config = Config(base_url=server.base_url, model="scripted-model", lsp_servers=())
    apps: list[FramesSeen] = []
    held = HeldFactory(live_factory(config, project), lambda: apps[0])
    app = FramesSeen(config, project, agent_factory=held, history_path=tmp_path / "h.jsonl")
    apps.append(app)
    return app, held


async def test_the_core_is_built_in_a_worker_begun_by_the_first_frame(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    app, held = live_window(model_server, project, tmp_path)
    async with app.run_test() as pilot:
        await wait_for(pilot, held.called.is_set, "the core's build begins")
        # Not before the first frame (it would hold the GIL while the window draws itself)…
        assert app.frames_seen[0] is False
        assert held.frames_before >= 1
        # …and begun by the first frame's `Ready`, with nothing typed: the thread it runs in.
        assert app.core_thread is not None and held.thread is app.core_thread
        assert app.core_thread.daemon  # a window closed at once does not wait for it
        assert app.turns.port is None
        held.release.set()
        await wait_for(pilot, lambda: app.turns.port is not None, "the core is ready")


async def test_a_message_sent_before_the_core_is_ready_waits_and_is_answered(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="Here is the answer."))
    app, held = live_window(model_server, project, tmp_path)
    async with app.run_test() as pilot:
        await wait_for(pilot, held.called.is_set, "the core's build begins")
        await send(pilot, "what does this project do?")
        await settle(pilot)
        assert list(app.turns.queue) == ["what does this project do?"]
        assert app.query_one(QueuedMessages).display
        assert not app.query(UserMessage) and not model_server.requests
        held.release.set()
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert [message.text for message in app.query(UserMessage)] == [
            "what does this project do?"
        ]
        assert app.query_one(AnswerBlock).to_markdown() == "Here is the answer."
        assert len(model_server.requests) == 1
        assert model_server.requests[0]["messages"][-1]["content"].endswith(
            "what does this project do?"
        )
        assert not app.turns.queue and not app.query_one(QueuedMessages).display


async def test_esc_and_ctrl_c_before_the_core_is_ready_keep_the_message(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    model_server.enqueue(Reply(text="Still answered."))
    app, held = live_window(model_server, project, tmp_path)
    async with app.run_test() as pilot:
        await wait_for(pilot, held.called.is_set, "the core's build begins")
        await send(pilot, "hello")
        await pilot.press("escape")
        await pilot.press("ctrl+c")
        await settle(pilot)
        assert list(app.turns.queue) == ["hello"] and app.is_running
        held.release.set()
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert app.query_one(AnswerBlock).to_markdown() == "Still answered."


async def test_quitting_before_the_core_is_ready_leaves_at_once(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    app, held = live_window(model_server, project, tmp_path)
    async with app.run_test() as pilot:
        await wait_for(pilot, held.called.is_set, "the core's build begins")
        await pilot.press("ctrl+q")
        await settle(pilot)
        assert not app.is_running
        assert app.return_code == 0
    held.release.set()  # the build ends after the window: nothing is drawn, nothing breaks


def descriptions(keys: list[Any]) -> list[str]:
    return [str(getattr(key, "description", "")) for key in keys]


async def test_the_footer_is_rebuilt_only_when_its_keys_change(
    still_app: Callable[..., MMApp],
) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await settle(pilot)
        footer = app.query_one(KeysFooter)
        before = list(footer.children)  # held: a rebuilt footer has other widgets
        assert "Help" in descriptions(before)
        app.refresh_bindings()  # nothing shown changes: the same key widgets stay
        await settle(pilot)
        assert len(footer.children) == len(before)
        assert all(now is then for now, then in zip(footer.children, before, strict=True))
        # A key that comes or goes: the next test.


async def test_a_key_that_comes_or_goes_is_mounted_or_removed_alone_where_a_rebuild_puts_it(
    still_app: Callable[..., MMApp],
) -> None:
    app = still_app()
    async with app.run_test() as pilot:
        await settle(pilot)
        footer = app.query_one(KeysFooter)

        def drawn() -> tuple[list[str], str]:
            return descriptions(list(footer.children)), footer_text(app)

        before = list(footer.children)
        app.turns.submit("a message while no core is there")  # Alt+↑ edits it: "Edit queued"
        await settle(pilot)
        after = list(footer.children)
        came = [key for key in after if key not in before]
        assert descriptions(came) == ["Edit queued"]
        assert [key for key in after if key in before] == before  # untouched, in order
        patched = drawn()
        footer.call_later(Footer.recompose, footer)  # what a whole rebuild draws
        await settle(pilot)
        assert not set(footer.children) & set(after)
        assert drawn() == patched
        rebuilt = list(footer.children)
        app.turns.clear_queue()  # "Edit queued" goes
        await settle(pilot)
        assert "Edit queued" not in descriptions(list(footer.children))
        assert list(footer.children) == [
            key for key in rebuilt if descriptions([key]) != ["Edit queued"]
        ]
        patched = drawn()
        footer.call_later(Footer.recompose, footer)
        await settle(pilot)
        assert drawn() == patched


def footer_text(app: MMApp) -> str:
    """The footer's row as the screen draws it."""
    footer = app.query_one(KeysFooter)
    strips = app.screen._compositor.render_strips()  # pyright: ignore[reportPrivateUsage]
    return strips[footer.region.y].text


def test_the_collector_is_paused_while_the_core_is_built_then_back() -> None:
    assert gc.isenabled()
    with collector_paused(freeze=lambda: False):
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), collector_paused(freeze=lambda: False):
        raise RuntimeError("a factory that fails")
    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    try:
        with collector_paused(freeze=lambda: True):
            kept = [object() for _ in range(10)]
        assert gc.get_freeze_count() >= frozen + len(kept)
    finally:
        gc.unfreeze()


async def test_once_started_the_window_collects_young_garbage_less_often_until_it_closes(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    before = gc.get_threshold()
    assert before[0] < YOUNG_COLLECTION
    app, held = live_window(model_server, project, tmp_path)
    async with app.run_test() as pilot:
        held.release.set()
        await wait_for(pilot, lambda: gc.get_threshold() != before, "start-up is over")
        assert gc.get_threshold() == (YOUNG_COLLECTION, *before[1:])
    assert gc.get_threshold() == before


#: Modules the first frame does without: screens it does not show, the server check, the
#: answer's Markdown, the core's client. Each is imported where first needed.
NOT_AT_START = (
    "openai",
    "markdown_it",
    "mm_tui.agent.agent",
    "mm_tui.agent.attachments",
    "mm_tui.agent.checkpoints",
    "mm_tui.agent.config.preferences",
    "mm_tui.agent.project_instructions",
    "mm_tui.agent.server_check",
    "mm_tui.agent.session_index",
    "mm_tui.agent.session_log",
    "mm_tui.widgets.answer_blocks",
    "mm_tui.widgets.file_picker",
    "mm_tui.widgets.first_run",
    "mm_tui.widgets.help_screen",
    "mm_tui.widgets.output_viewer",
    "mm_tui.widgets.pickers",
    "mm_tui.widgets.session_picker",
    "mm_tui.widgets.trust_screen",
    "pathspec",
    "urllib.request",
)


def test_the_window_module_imports_nothing_the_first_frame_does_not_show() -> None:
    import subprocess
    import sys

    code = (
        "import sys, mm_tui.app, mm_tui.window.ports, mm_tui.agent.config\n"
        f"print(sorted(set({NOT_AT_START!r}) & set(sys.modules)))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert loaded == "[]"


FIRST_ANSWER_WARMED = """
import asyncio, sys
from pathlib import Path
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.window.ports import replay_port_factory

class Window(MMApp):
    def on_ready(self) -> None:
        # The first frame is on screen; Textual calls MMApp's own on_ready next (a handler of
        # each class in the MRO), which starts the core's build.
        self.before = "mm_tui.widgets.answer_blocks" in sys.modules

async def main() -> None:
    config = Config()
    app = Window(config, Path.cwd(), agent_factory=replay_port_factory(config, Path.cwd(), None),
                 history_path=None, still=True)
    async with app.run_test() as pilot:
        while app.core_thread is None or app.core_thread.is_alive():
            await pilot.pause(0.02)
        print(app.before, "mm_tui.widgets.answer_blocks" in sys.modules)

asyncio.run(main())
"""


def test_the_core_worker_loads_the_first_answer_widgets_once_the_core_is_ready(
    tmp_path: Path,
) -> None:
    """Not at start-up (the first frame), and not when the first words come (the window's
    thread): by the worker, after it handed the core over (here a replay built in it)."""
    import subprocess
    import sys

    env = {"XDG_DATA_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    shown = subprocess.run(
        [sys.executable, "-c", FIRST_ANSWER_WARMED],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
        cwd=tmp_path,
    ).stdout.split()
    assert shown == ["False", "True"]


QUIT_WHILE_THE_CORE_BUILDS = """
import threading
from pathlib import Path
from mm_tui.agent.config import Config
from mm_tui.app import MMApp

never = threading.Event()

def factory(sink):
    never.wait()  # a core whose build never ends (openai still importing)

app = MMApp(Config(), Path.cwd(), agent_factory=factory, history_path=None, still=True)

async def quit_once_building(pilot):
    while app.core_thread is None or not app.core_thread.is_alive():
        await pilot.pause(0.02)
    await pilot.press("ctrl+q")

print("exit", app.run(headless=True, auto_pilot=quit_once_building), flush=True)
"""


def test_ctrl_q_while_the_core_builds_leaves_without_waiting_for_it(tmp_path: Path) -> None:
    """The process ends though the build never does (it used to join the build's thread)."""
    import subprocess
    import sys

    env = {**os.environ, "XDG_DATA_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", QUIT_WHILE_THE_CORE_BUILDS],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,  # a bound for a broken build only: the old window never left
    )
    assert (done.returncode, done.stdout.split()) == (0, ["exit", "0"]), done.stderr[-2000:]


class FirstFocus(MMApp):
    """The window, noting every widget that gets the focus, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.focused_in_turn: list[str] = []

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        self.focused_in_turn.append(type(event.widget).__name__)


async def test_the_prompt_has_the_focus_first_and_a_key_typed_before_goes_into_it(
    tmp_path: Path,
) -> None:
    """Textual focused the transcript (the first focusable) before the prompt: keys typed as
    the window started went to it, came up to the window once the prompt had the focus,
    and were dropped (tried in tmux: a message typed at once was lost)."""
    app = FirstFocus(Config(), FIXED_CWD, history_path=tmp_path / "h.jsonl", still=True)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.focused_in_turn[:1] == ["PromptInput"]
        prompt = app.query_one(PromptInput)
        app.transcript.focus()
        await settle(pilot)
        # Keys come while the transcript has the focus; the prompt gets it before they come
        # back up from the transcript (the order of start-up, replayed).
        app.post_message(events.Key("h", "h"))
        app.post_message(events.Key("i", "i"))
        prompt.focus()
        await settle(pilot)
        assert prompt.text == "hi" and app.focused is prompt
