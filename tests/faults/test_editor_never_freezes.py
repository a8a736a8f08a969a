"""Ctrl+G with an editor that cannot run must leave the window alive, in a real terminal:
a missing `$EDITOR` froze it (blank screen, Ctrl+Q and Ctrl+C dead) because a failure inside
Textual's `suspend()` skipped its resume. A Pilot test cannot see this: its driver never
suspends."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from scripted_server import ScriptedServer
from tests.tmux_session import mm_tui_command, wait_for_screen
from tests.waiting import wait_until


@pytest.mark.parametrize(
    ("editor", "says"),
    [
        ("no-such-editor", "'no-such-editor' is not installed"),
        # on the PATH, but its interpreter is not: it fails to start while the window is away
        ("broken-editor", "'broken-editor' failed: No such file"),
    ],
    ids=["missing", "cannot-start"],
)
def test_an_editor_that_cannot_run_leaves_the_window_alive(
    tmux, tmp_path: Path, model_server: ScriptedServer, editor: str, says: str
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    broken = bin_dir / "broken-editor"
    broken.write_text("#!/nonexistent/interpreter\n")
    broken.chmod(0o755)
    command = f"PATH={bin_dir}:$PATH VISUAL= EDITOR={shlex.quote(editor)} " + mm_tui_command(
        tmp_path, model_server.base_url
    )
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "120", "-y", "40")
    tmux("send-keys", "-t", "mm", f"cd {tmp_path} && {command}; echo EXITED=$?", "Enter")

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "the window", lambda s: "scripted-model" in s)
    tmux("send-keys", "-t", "mm", "-l", "hello")
    wait_for_screen(screen, "the typed text", lambda s: "hello" in s)
    tmux("send-keys", "-t", "mm", "C-g")
    wait_for_screen(screen, "the editor's failure said", lambda s: says in s.replace("\n", ""))
    tmux("send-keys", "-t", "mm", "-l", " world")  # keys still reach the prompt
    wait_for_screen(screen, "the prompt still typing", lambda s: "hello world" in s)
    tmux("send-keys", "-t", "mm", "C-q")
    wait_until(screen, "mm-tui to quit", until=lambda s: "EXITED=0" in s, timeout=30, interval=0.2)
