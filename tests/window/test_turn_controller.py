"""The window's turn controller in plain Python: its intents against the real Agent and the
scripted server, and against the replay source. No Textual here: a recording surface stands in
for the screen, and `Harness.pump` does what the app does with the events the sink receives."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator, Sequence, Set
from concurrent.futures import Future
from pathlib import Path

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import (
    WAITING_FOR_MODEL,
    Notice,
    NoticeLevel,
    PermissionRequest,
    PermissionResolved,
    TextDelta,
    ToolFinished,
    TurnEnded,
    TurnStarted,
)
from mm_tui.agent.model_client import ModelFault
from mm_tui.agent.port import PermissionState, TopLineView
from mm_tui.replay import END_OF_REPLAY, Pace, demo_path, load_replay
from mm_tui.window.commands import SlashCommands
from mm_tui.window.event_bridge import TurnWorkerDone, WindowEvent
from mm_tui.window.ports import config_view
from mm_tui.window.replay_source import (
    NO_AGENT_IN_REPLAY,
    NO_MODEL_IN_REPLAY,
    REPLAY_STOPPED,
    ReplaySource,
)
from mm_tui.window.settings_intents import YOLO_OFF, YOLO_ON
from mm_tui.window.turns import AGENT_NOT_READY, TURN_RUNNING, TurnController
from scripted_server import Reply, ScriptedServer, ToolCall

WAIT = 10.0


class RecordingSurface:
    """The screen, reduced to what was shown; thread work runs in real threads."""

    def __init__(self) -> None:
        self.notices: list[tuple[NoticeLevel, str]] = []
        self.user_messages: list[str] = []
        self.queues: list[list[str]] = []
        self.statuses: list[tuple[str, float | None]] = []
        self.top_lines: list[TopLineView] = []
        self.restarted: list[str] = []
        self.threads: list[threading.Thread] = []

    def say(self, level: NoticeLevel, text: str) -> None:
        self.notices.append((level, text))

    def show_user_message(self, text: str) -> None:
        self.user_messages.append(text)

    def show_queue(self, queued: Sequence[str], *, held: bool = False) -> None:
        self.queues.append(list(queued))

    def show_status(self, state: str, elapsed: float | None) -> None:
        self.statuses.append((state, elapsed))

    def show_top_line(self, view: TopLineView) -> None:
        self.top_lines.append(view)

    def keys_changed(self) -> None:
        pass

    def run_in_thread(
        self, work: Callable[[], None], *, group: str = "default", exclusive: bool = False
    ) -> None:
        thread = threading.Thread(target=work, daemon=True)
        self.threads.append(thread)
        thread.start()

    def restart_transcript(self, notice: str, then: Callable[[], None]) -> None:
        self.restarted.append(notice)
        then()

    # CommandSurface: screens are not opened here; the transcript is one fixed line.
    def open_help(self) -> None:
        raise AssertionError("no test opens the help")

    def open_grants(self, state: PermissionState, on_close: Callable[[Set[str]], None]) -> None:
        raise AssertionError("no test opens the grants screen")

    def leave(self) -> None:
        raise AssertionError("no test quits")

    def transcript_markdown(self) -> str:
        return "> hi\n"


class Harness:
    """A controller, its surface, and the events its port sent, dispatched as the app does."""

    def __init__(self, config: Config, cwd: Path) -> None:
        self.surface = RecordingSurface()
        self.events: queue.Queue[WindowEvent] = queue.Queue()
        self.seen: list[WindowEvent] = []
        self.turns = TurnController(self.surface, self.events.put, config_view(config, cwd))

    def pump(self, until: Callable[[WindowEvent], bool]) -> WindowEvent:
        """Dispatch events until one satisfies `until` (and return it)."""
        while True:
            event = self.events.get(timeout=WAIT)
            self.seen.append(event)
            match event:
                case TurnStarted(text=text):
                    self.turns.turn_started(text)
                case PermissionRequest():
                    self.turns.question_opened(event)
                case PermissionResolved(call_id=call_id):
                    self.turns.question_resolved(call_id)
                case ToolFinished(call_id=call_id):
                    self.turns.tool_finished(call_id)
                case Notice(text=text):
                    self.turns.said(text)
                case TurnEnded():
                    self.turns.turn_ended(event)
                case TurnWorkerDone(ended=ended):
                    if self.turns.running:
                        self.turns.turn_ended(ended)
                    self.turns.start_next()
                case _:
                    pass
            if until(event):
                return event

    def until_idle(self) -> None:
        self.pump(
            lambda e: isinstance(e, TurnWorkerDone) and not (self.turns.running or self.turns.queue)
        )


def asked(event: WindowEvent) -> bool:
    return isinstance(event, PermissionRequest)


@pytest.fixture
def live(model_server: ScriptedServer, tmp_path: Path) -> Iterator[tuple[Harness, Agent]]:
    """A controller whose port is the real Agent talking to the scripted server."""
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())
    harness = Harness(config, tmp_path)
    agent = Agent(config, harness.events.put, tmp_path, retry_delays=())
    harness.turns.port_ready(agent)
    yield harness, agent
    agent.close()


def test_a_message_sent_while_idle_starts_a_turn_at_once(
    live: tuple[Harness, Agent], model_server: ScriptedServer
) -> None:
    harness, _ = live
    model_server.enqueue(Reply(text="Hi."))
    harness.turns.submit("hello")
    assert harness.turns.running and not harness.turns.queue
    assert harness.surface.user_messages == ["hello"]
    assert harness.surface.statuses[0] == (WAITING_FOR_MODEL, 0.0)
    harness.until_idle()
    assert not harness.turns.running
    assert model_server.requests[0]["messages"][-1] == {"role": "user", "content": "hello"}
    assert harness.surface.user_messages == ["hello"]  # TurnStarted does not echo it twice


def test_messages_sent_during_a_turn_wait_in_order_and_a_answers_the_question(
    live: tuple[Harness, Agent], model_server: ScriptedServer, tmp_path: Path
) -> None:
    harness, _ = live
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo first"})]),
        Reply(text="first answer"),
        Reply(text="second answer"),
        Reply(text="third answer"),
    )
    turns = harness.turns
    turns.submit("one")
    harness.pump(asked)
    turns.submit("two")
    turns.submit("three")
    assert list(turns.queue) == ["two", "three"]
    assert harness.surface.queues[-1] == ["two", "three"]
    call_id = next(iter(turns.questions))
    assert turns.answer("a") == (call_id, "a")
    assert turns.answer("a") is None  # no question is open any more
    harness.until_idle()
    sent = [request["messages"][-1]["content"] for request in model_server.requests]
    assert sent == ["one", "first\n", "two", "three"]
    assert harness.surface.user_messages == ["one", "two", "three"]


def test_the_answered_question_is_the_one_answered_not_the_oldest(tmp_path: Path) -> None:
    """Two questions open (a second arrived while the first waits): answering the second, the
    one the person focused, settles it and leaves the first waiting."""
    turns = Harness(Config(), tmp_path).turns
    first, second = (
        PermissionRequest(f"call_{n}", "bash", f"bash {command}", command, None, Future())
        for n, command in ((1, "rm -rf build"), (2, "ls"))
    )
    turns.question_opened(first)
    turns.question_opened(second)
    assert turns.answer("a", call_id="call_2") == ("call_2", "a")
    assert second.future.result(timeout=0) == "a" and not first.future.done()
    assert list(turns.questions) == ["call_1"]
    assert turns.answer("r", call_id="call_2") is None  # already answered: nothing else is
    assert not first.future.done()
    assert turns.answer("r") == ("call_1", "r")  # no call named: the oldest open one


def test_a_message_sent_before_the_core_is_ready_waits_for_it(
    model_server: ScriptedServer, tmp_path: Path
) -> None:
    config = Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=())
    harness = Harness(config, tmp_path)
    harness.turns.submit("early")
    assert list(harness.turns.queue) == ["early"] and not harness.turns.running
    model_server.enqueue(Reply(text="ok"))
    agent = Agent(config, harness.events.put, tmp_path, retry_delays=())
    try:
        harness.turns.port_ready(agent)
        harness.turns.start_next()
        harness.until_idle()
        assert model_server.requests[0]["messages"][-1]["content"] == "early"
    finally:
        agent.close()


def test_yolo_goes_through_the_port_and_the_top_line_says_it(
    live: tuple[Harness, Agent],
) -> None:
    harness, agent = live
    harness.turns.toggle_yolo()
    assert agent.permission_state().yolo
    assert harness.surface.notices[-1] == ("warning", YOLO_ON)
    assert harness.surface.top_lines[-1].mode == "yolo"
    harness.turns.toggle_yolo()
    assert not agent.permission_state().yolo
    assert harness.surface.notices[-1] == ("info", YOLO_OFF)
    assert harness.surface.top_lines[-1].mode == ""


def test_permissions_ask_allow_and_revoke_go_through_the_port(
    live: tuple[Harness, Agent], model_server: ScriptedServer, tmp_path: Path
) -> None:
    harness, agent = live
    commands = SlashCommands(harness.turns, harness.surface, tmp_path)
    assert commands.handle("/permissions allow")
    assert agent.permission_state().mode == "allow"
    assert commands.handle("/permissions ask")
    assert agent.permission_state().mode == "ask"
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "true"})]), Reply(text="k"))
    harness.turns.submit("run true")
    harness.pump(asked)
    harness.turns.answer("s")
    harness.until_idle()
    assert agent.permission_state().grants == {"bash(true *)"}  # the prefix
    assert commands.handle("/permissions revoke bash")
    assert agent.permission_state().grants == frozenset()
    assert harness.surface.notices[-3:] == [
        ("info", "permissions: allow"),
        ("info", "permissions: ask"),
        ("info", "revoked: bash"),
    ]
    assert commands.handle("/permissions sometimes")
    assert harness.surface.notices[-1] == (
        "warning",
        "usage: /permissions [ask|allow|revoke <tool>]",
    )


def test_esc_interrupts_the_running_turn_through_the_port(
    live: tuple[Harness, Agent], model_server: ScriptedServer
) -> None:
    harness, _ = live
    model_server.enqueue(Reply(text="word " * 400, chunk_size=5, delay=0.02))
    harness.turns.submit("talk")
    harness.pump(lambda event: isinstance(event, TextDelta))  # the answer streams
    harness.turns.interrupt()
    ended = harness.pump(lambda event: isinstance(event, TurnEnded))
    assert ended == TurnEnded("interrupted")
    harness.until_idle()
    assert not harness.turns.running


def test_commands_that_need_an_idle_core_wait_for_the_turn_to_end(
    live: tuple[Harness, Agent], model_server: ScriptedServer
) -> None:
    harness, agent = live
    model_server.enqueue(Reply(tool_calls=[ToolCall("bash", {"command": "true"})]), Reply(text="k"))
    harness.turns.submit("run true")
    harness.pump(asked)
    harness.turns.new_session("fresh")
    harness.turns.compact()
    harness.turns.model("other-model")
    assert harness.surface.notices == [("warning", TURN_RUNNING)] * 3
    assert harness.surface.restarted == []
    harness.turns.answer("r")
    harness.until_idle()
    harness.turns.new_session("fresh")
    assert harness.surface.restarted == ["fresh"]
    assert [m["role"] for m in agent.messages] == ["system"]


def test_commands_before_the_core_is_ready_say_so(tmp_path: Path) -> None:
    harness = Harness(Config(model="m"), tmp_path)
    harness.turns.toggle_yolo()
    harness.turns.set_permissions("allow")
    assert harness.surface.notices == [
        ("warning", AGENT_NOT_READY.format(command="/yolo")),
        ("warning", AGENT_NOT_READY.format(command="/permissions")),
    ]
    assert harness.turns.top_line().model == "m"


def test_the_end_of_a_turn_does_not_repeat_an_error_already_said(tmp_path: Path) -> None:
    turns = Harness(Config(), tmp_path).turns
    assert turns.turn_started("hi")
    turns.said("server gone")
    assert turns.turn_ended(TurnEnded("error", "server gone")) is None
    turns.turn_started("again")
    assert turns.turn_ended(TurnEnded("error", "server gone")) == "server gone"


# -- the replay source behind the same seam --------------------------------------------------


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[tuple[Harness, ReplaySource]]:
    harness = Harness(Config(), tmp_path)
    events, meta = load_replay(demo_path(), Pace(speed=0))
    source = ReplaySource(events, meta, harness.events.put, cwd=tmp_path)
    harness.turns.port_ready(source)
    yield harness, source
    source.close()


def test_a_replay_refuses_messages_and_model_commands_in_one_line(
    replay: tuple[Harness, ReplaySource], tmp_path: Path
) -> None:
    harness, source = replay
    commands = SlashCommands(harness.turns, harness.surface, tmp_path)
    harness.turns.submit("hello?")
    assert not harness.turns.queue and not harness.surface.threads
    for command in ("/compact", "/model", "/model other", "/new", "/yolo", "/permissions ask"):
        assert commands.handle(command)
    said = harness.surface.notices
    assert said[0] == ("info", NO_MODEL_IN_REPLAY)
    names = ["/compact", "/model", "/model", "/new", "/yolo", "/permissions"]
    assert said[1:] == [("warning", NO_AGENT_IN_REPLAY.format(command=n)) for n in names]
    with pytest.raises(ModelFault, match="/model is not available in a replay"):
        source.list_models()
    assert source.run_turn("x") == TurnEnded("error", NO_MODEL_IN_REPLAY)


def test_a_replay_runs_no_shell_command_and_has_nothing_to_undo(
    replay: tuple[Harness, ReplaySource], tmp_path: Path
) -> None:
    harness, _ = replay
    commands = SlashCommands(harness.turns, harness.surface, tmp_path)
    harness.turns.submit("!rm -rf /")
    assert commands.handle("/undo")
    assert not harness.turns.queue and not harness.surface.threads
    assert harness.surface.notices == [
        ("warning", NO_AGENT_IN_REPLAY.format(command="!")),
        ("warning", NO_AGENT_IN_REPLAY.format(command="/undo")),
    ]


def test_a_replay_at_speed_0_hands_the_session_whole_and_says_only_its_end(
    tmp_path: Path,
) -> None:
    events, meta = load_replay(demo_path(), Pace(speed=0))
    harness = Harness(Config(), tmp_path)
    source = ReplaySource(events, meta, harness.events.put, cwd=tmp_path).start()
    harness.turns.port_ready(source)
    harness.pump(lambda e: isinstance(e, Notice) and e.text == END_OF_REPLAY)
    history = source.resumed_history()
    assert history is not None
    said = [m["content"] for m in history["messages"] if m["role"] == "user"]
    assert len(said) == 3 and said[0].startswith("Why does greet")
    assert not any(isinstance(e, TurnStarted) for e in harness.seen)
    source.close()


def test_a_replay_shows_its_own_model_and_exports_with_it(
    replay: tuple[Harness, ReplaySource], tmp_path: Path
) -> None:
    harness, _ = replay
    view = harness.turns.top_line()
    assert (view.model, view.mode) == ("qwen2.5-coder:14b", "replay")
    surface = RecordingSurface()
    assert SlashCommands(harness.turns, surface, tmp_path).handle("/export talk.md")
    text = (tmp_path / "talk.md").read_text()
    assert "- model: qwen2.5-coder:14b" in text and text.endswith("> hi\n")
    assert surface.notices == [("info", f"transcript exported to {tmp_path / 'talk.md'}")]


def test_a_replay_plays_to_its_end_and_esc_stops_it(tmp_path: Path) -> None:
    events, meta = load_replay(demo_path(), Pace(speed=0))
    harness = Harness(Config(), tmp_path)
    source = ReplaySource(list(events), meta, harness.events.put, cwd=tmp_path).start()
    harness.turns.port_ready(source)
    harness.pump(lambda e: isinstance(e, Notice) and e.text == END_OF_REPLAY)
    assert sum(isinstance(e, TurnStarted) for e in harness.seen) == 3
    assert source.resumed_history() is None  # timed events are played, not handed over
    source.close()

    slow = Harness(Config(), tmp_path)
    events, meta = load_replay(demo_path())  # at its real pace: Esc comes mid-turn
    source = ReplaySource(events, meta, slow.events.put, cwd=tmp_path).start()
    slow.turns.port_ready(source)
    try:
        slow.pump(lambda e: isinstance(e, TurnStarted))
        slow.turns.interrupt()  # a replayed turn runs: Esc stops the replay
        slow.pump(lambda e: isinstance(e, Notice) and e.text == REPLAY_STOPPED)
        assert slow.pump(lambda e: isinstance(e, TurnEnded)) == TurnEnded("interrupted")
        assert not slow.turns.running
    finally:
        source.close()
