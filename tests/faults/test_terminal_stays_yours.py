"""The terminal stays the person's: every place that draws text a server or a model
supplied — the top line's model id, the model picker, notices, row titles, the answer, and
headless `-p` stdout and stderr — goes through the one sanitizer (`support.terminal_text`), so
no ESC sequence, C0/C1 control or bidi override reaches the terminal; and an error line
never quotes a huge value.

The window runs for real in tmux; `pipe-pane` records every byte mm-tui writes to the
terminal, and the hostile payloads must be absent from it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mm_tui.agent.config import Config, ConfigError, parse_config_text
from mm_tui.agent.events import Notice, ToolFinished, ToolStarted
from mm_tui.agent.model_client import ModelFault, sse_chunks
from mm_tui.agent.tools.registry import build_registry
from mm_tui.support.terminal_text import LINE_CHARS, literal, one_line, quoted
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, assert_valid_history
from tests.tmux_session import mm_tui_command, wait_for_screen
from tests.waiting import wait_until


#: One marker per place, so a leak names where it came from.
def hostile(place: str) -> str:
    return (
        f"{place}\x1b]0;PWNED-{place}\x07\x1b]52;c;cHduZWQ=\x07\x1b[5;41m"
        f"\u202e{place[::-1]}\u2066\x9b5;41m\x07\x08\x00end"
    )


#: What must never reach the terminal: OSC title/clipboard, the blink-on-red SGR (7-bit and
#: 8-bit), the bidi override and isolate, BEL/BS/NUL from the text.
FORBIDDEN_BYTES = (
    b"\x1b]0;PWNED",
    b"\x1b]52;",
    b"\x1b[5;41m",
    "\u202e".encode(),
    "\u2066".encode(),
    "\x9b".encode(),
)
FORBIDDEN_TEXT = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_literal_removes_bidi_controls_beside_escapes_and_controls() -> None:
    assert literal(hostile("x")) == "xx" + "end"
    assert literal("abc \u202aembedded\u202c \u2067iso\u2069") == "abc embedded iso"
    assert literal("שלום world\n\tok") == "שלום world\n\tok"  # RTL text itself stays


def test_quoted_and_one_line_are_one_bounded_line() -> None:
    value = "A" * 5000 + "\n\x1b[31m\u202e"
    shown = quoted(value)
    assert shown == "A" * 200 + "… (4814 more characters)"
    assert quoted("a\nb\u202e") == "a\\nb\\u202e"
    line = one_line("first\nsecond\x1b]0;t\x07 " + "B" * 5000)
    assert "\n" not in line and len(line) < LINE_CHARS + 40
    assert line.startswith("first second B")


# --- error lines never quote a huge value ----------------------------------------------

HUGE = "B" * 20_000 + "\x1b]0;PWNED\x07\u202e\x9b"
HUGE_CALLS = {
    "read_file path": ToolCall("read_file", {"path": HUGE}),
    "write_file path": ToolCall("write_file", {"path": HUGE, "content": "x"}),
    "edit_file path": ToolCall("edit_file", {"path": HUGE, "edits": [{"old": "a", "new": "b"}]}),
    "edit_file old": ToolCall("edit_file", {"path": "a.txt", "edits": [{"old": HUGE, "new": "b"}]}),
    "read_skill name": ToolCall("read_skill", {"name": HUGE}),
    "unknown tool": ToolCall(HUGE, {"x": 1}),
    "lsp action": ToolCall("lsp", {"action": HUGE, "path": "a.py"}),
    "lsp path": ToolCall("lsp", {"action": "definition", "path": HUGE, "symbol": "x"}),
}


@pytest.mark.parametrize("case", HUGE_CALLS)
def test_a_tool_error_never_quotes_a_huge_value(
    case: str, make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / ".mm/skills").mkdir(parents=True)
    (tmp_path / ".mm/skills/one.md").write_text("One skill.")
    model_server.dialect = "ollama"  # the call arrives whole (not cut as a runaway)
    model_server.enqueue(Reply(tool_calls=[HUGE_CALLS[case]]), Reply(text="done"))
    real_tools = build_registry(Config(lsp_servers=()), tmp_path).tools.values()
    agent, events = make_agent(tools=list(real_tools), yolo=True, auto_compact=0)
    agent.run_turn("go")
    [finished] = events.of(ToolFinished)
    assert len(finished.output) < 1000, finished.output[:300]
    assert not FORBIDDEN_TEXT.search(finished.output.replace("\n", " ")), finished.output[:300]
    [started] = events.of(ToolStarted)
    assert not FORBIDDEN_TEXT.search(started.title), started.title[-80:]  # escaped, whole
    assert_valid_history(agent.messages)


CONFIG_HUGE = '"' + "A" * 5000 + '\\e]0;PWNED\\a\\u202e"'
CONFIGS = {
    "a rule": f"permissions: {{allow: [{CONFIG_HUGE}]}}\n",
    "a rule's tool": f"permissions: {{deny: ['{'x' * 5000}(y)']}}\n",
    "a number": f"maxOutput: {CONFIG_HUGE}\n",
    "a list": f"model: [{CONFIG_HUGE}]\n",
    "a choice": f"toolCalls: {CONFIG_HUGE}\n",
}


@pytest.mark.parametrize("case", CONFIGS)
def test_a_config_error_line_never_quotes_a_huge_value(case: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        parse_config_text(CONFIGS[case], tmp_path / ".mm.yaml")
    for line in raised.value.problems:
        assert len(line) < 500 and "\n" not in line, line[:300]
        assert not FORBIDDEN_TEXT.search(line), line[:300]


def test_a_servers_error_mid_stream_is_one_bounded_line() -> None:
    message = "bad\n" + "X" * 50_000 + "\x1b]0;PWNED\x07"
    blocks = iter([b"data: " + json.dumps({"error": {"message": message}}).encode() + b"\n\n"])
    with pytest.raises(ModelFault) as raised:
        list(sse_chunks(blocks))
    assert len(raised.value.message) < 400 and "\n" not in raised.value.message
    assert "\x1b" not in raised.value.message


def test_a_turn_ending_error_is_one_bounded_line_in_the_window_and_the_session(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    body = {"error": {"message": "first line\n" + "X" * 50_000}}
    model_server.enqueue(Reply(status=400, error_body=body), Reply(text="ok"))
    agent, events = make_agent()
    ended = agent.run_turn("go")
    [notice] = [n for n in events.of(Notice) if n.level == "error"]
    assert ended.error == notice.text and len(notice.text) < 400 and "\n" not in notice.text
    assert agent.run_turn("again").reason == "answered"


# --- the window, for real, in tmux ------------------------------------------------------


def test_no_hostile_byte_from_a_server_or_a_model_reaches_the_terminal(
    tmux: Callable[..., str], tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.models = [hostile("MODEL"), "plain-model"]  # the first is taken: top line
    model_server.enqueue(
        Reply(
            tool_calls=[
                ToolCall(hostile("TOOL"), {}),  # an unknown tool: its row title
                ToolCall("bash", {"command": "printf 'out\\n'; exit 3"}),  # a failed row
            ]
        ),
        Reply(text="Answer: " + hostile("ANSWER"), reasoning=hostile("REASONING")),
        Reply(status=400, error_body={"error": {"message": hostile("NOTICE")}}),
    )
    raw = tmp_path / "terminal.bytes"
    project = tmp_path / "project"
    project.mkdir()
    command = mm_tui_command(tmp_path, model_server.base_url)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "140", "-y", "45")
    tmux("set-option", "-g", "set-clipboard", "on")
    tmux("set-option", "-g", "allow-rename", "on")
    tmux("pipe-pane", "-o", "-t", "mm", f"cat >> {raw}")
    tmux("send-keys", "-t", "mm", f"cd {project} && {command}", "Enter")

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "the model id on the top line", lambda s: "MODEL" in s)
    tmux("send-keys", "-t", "mm", "go", "Enter")
    wait_for_screen(screen, "the turn over", lambda s: "Answer:" in s and "Running" not in s)
    tmux("send-keys", "-t", "mm", "again", "Enter")
    wait_for_screen(screen, "the notice", lambda s: "NOTICE" in s)
    tmux("send-keys", "-t", "mm", "/model", "Enter")
    wait_for_screen(screen, "the model picker", lambda s: "plain-model" in s)
    tmux("send-keys", "-t", "mm", "Escape")
    time.sleep(1)
    tmux("send-keys", "-t", "mm", "C-q")

    def running() -> str:
        return tmux("display-message", "-p", "-t", "mm", "#{pane_current_command}").strip()

    wait_until(
        running,
        "mm-tui to exit",
        until=lambda r: not r.startswith("python"),
        timeout=30,
        interval=0.2,
    )
    written = raw.read_bytes()
    for place in ("MODEL", "TOOL", "ANSWER", "NOTICE"):
        assert place.encode() in written, f"{place} was never drawn"
    for forbidden in FORBIDDEN_BYTES:
        at = written.find(forbidden)
        assert at < 0, f"{forbidden!r} reached the terminal: {written[at - 20 : at + 40]!r}"
    title = tmux("display-message", "-p", "-t", "mm", "#{pane_title}")
    assert "PWNED" not in title
    assert "pwned" not in tmux("list-buffers")


@pytest.mark.parametrize("output_format", ["text", "stream-json"])
def test_headless_stdout_and_stderr_carry_nothing_hostile_from_the_server_or_the_model(
    output_format: str, tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.models = [hostile("MODEL")]  # no --model: the server's first is used
    model_server.enqueue(
        Reply(tool_calls=[ToolCall(hostile("TOOL"), {})]),
        Reply(text="Answer: " + hostile("ANSWER"), reasoning=hostile("REASONING")),
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MM_"))}
    env.update({"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data")})
    done = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "-p", "go", "--yolo", "--output-format", output_format]
        + ["--base-url", model_server.base_url],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,  # -p reads piped input: none here
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "ANSWER" in done.stdout, done.stdout + done.stderr
    for stream in (done.stdout, done.stderr):
        assert not FORBIDDEN_TEXT.search(stream.replace("\n", "").replace("\t", "")), stream
