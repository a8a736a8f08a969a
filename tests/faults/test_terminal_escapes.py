"""Output with terminal escape sequences cannot change the person's terminal.

mm-tui runs for real inside tmux; a command's output and the model's answer carry the
sequences that set the window title (OSC 0/2), write the clipboard (OSC 52) and change colours
for good (SGR without reset). tmux records what reached it: its pane title, its paste buffers.
"""

from __future__ import annotations

import sys
from pathlib import Path

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.tmux_session import wait_for_screen

EVIL = "\\033]0;PWNED-TITLE\\007\\033]52;c;cHduZWQtY2xpcGJvYXJk\\007\\033[41;97mSTILL-RED"
EVIL_TEXT = "Done.\x1b]2;PWNED-TITLE-2\x07\x1b]52;c;cHduZWQtY2xpcGJvYXJk\x07\x1b[5;41m blink"


def test_escape_sequences_in_output_never_reach_the_terminal(
    tmux, tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(
            tool_calls=[ToolCall("bash", {"command": f"printf '{EVIL}'; exit 1"})]
        ),  # fails: the row opens
        Reply(text=EVIL_TEXT),
    )
    env = {"HOME": str(tmp_path), "XDG_DATA_HOME": str(tmp_path / "data"), "TERM": "xterm-256color"}
    command = " ".join(
        [f"{k}={v}" for k, v in env.items()]
        + [
            sys.executable,
            "-m",
            "mm_tui.cli",
            "--yolo",
            "--base-url",
            model_server.base_url,
            "--model",
            "m",
        ]
    )
    tmux(
        "-f",
        "/dev/null",
        "new-session",
        "-d",
        "-s",
        "mm",
        "-x",
        "120",
        "-y",
        "40",
        "-c",
        str(tmp_path),
        command,
    )
    tmux("set-option", "-g", "set-clipboard", "on")  # an OSC 52 would become a paste buffer
    tmux("set-option", "-g", "allow-rename", "on")
    title_before = tmux("display-message", "-p", "-t", "mm", "#{pane_title}").strip()

    def capture() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(capture, "Ready", lambda s: "Ready" in s)

    tmux("send-keys", "-t", "mm", "print the sequences", "Enter")
    wait_for_screen(capture, "the answer", lambda s: "blink" in s)

    screen = tmux("capture-pane", "-p", "-t", "mm")
    assert "STILL-RED" in screen  # the text itself is shown, literally
    title = tmux("display-message", "-p", "-t", "mm", "#{pane_title}").strip()
    assert "PWNED" not in title and title == title_before
    assert "pwned" not in tmux("list-buffers") + tmux("show-buffer")
    styled = tmux("capture-pane", "-p", "-e", "-t", "mm")
    red_lines = [line for line in styled.splitlines() if "\x1b[41" in line or ";41m" in line]
    assert not red_lines  # no red background leaked onto any line of the screen
