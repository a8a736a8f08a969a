"""Keys typed before the window can read them arrive as typed, in a real terminal.

Found trying mm-tui: "fix the test" and Enter typed at once after `mm-tui` became a new line in
the prompt, not a message. The kernel had cooked them (its Enter is a line feed, Ctrl+J) while
the interpreter started, before anything of mm-tui could set the terminal's modes. Here the
shell runs mm-tui only once the keys are in the terminal's queue, cooked: the same bytes as
typed during the interpreter's start, without guessing how long a start takes.
"""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from scripted_server import Reply, ScriptedServer
from tests.tmux_session import mm_tui_command, wait_for_screen
from tests.waiting import wait_until


def held_launch(tmux: Callable[..., str], tmp_path: Path, command: str) -> Callable[[], None]:
    """Start a shell line that runs `command` once released (the returned function); until
    then the terminal is as the shell leaves it for a command: cooked, echoing."""
    ready, go = tmp_path / "ready", tmp_path / "go"
    project = tmp_path / "project"
    project.mkdir()
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "100", "-y", "30")
    line = f"cd {project} && touch {ready} && while [ ! -e {go} ]; do sleep 0.05; done && {command}"
    tmux("send-keys", "-t", "mm", line, "Enter")
    wait_until(ready.exists, "the shell holding the command", timeout=60, interval=0.1)
    return go.touch


def test_a_message_typed_before_the_window_could_read_keys_is_sent(
    tmux: Callable[..., str], tmp_path: Path, model_server: ScriptedServer
) -> None:
    """Enter sends (it is not a new line in the prompt), the text is whole (a multi-byte
    character, a typo erased), and what was typed after that Enter waits in the prompt."""
    model_server.enqueue(Reply(text="Fixed it."))
    release = held_launch(tmux, tmp_path, mm_tui_command(tmp_path, model_server.base_url))
    tmux("send-keys", "-t", "mm", "fix the tëst ✓x", "BSpace", "Enter", "and the docs")
    release()

    [request] = model_server.wait_for_requests(1, timeout=60)
    assert request["messages"][-1] == {"role": "user", "content": "fix the tëst ✓"}

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "the answer", lambda s: "Fixed it." in s and "Ready" in s)
    assert "│ and the docs" in screen()  # in the prompt, not sent
    tmux("send-keys", "-t", "mm", "C-q")


def test_a_trust_question_at_start_is_not_answered_by_keys_typed_before_it_was_shown(
    tmux: Callable[..., str], tmp_path: Path, model_server: ScriptedServer
) -> None:
    """Attack: the project's AGENTS.md makes the window ask to trust it first. The message
    typed blind went to the question, whose Enter picked "Don't trust" (remembered) and lost
    the message. Now the question waits for those keys: the message waits, queued, for the
    answer, and is sent with it applied."""
    model_server.enqueue(Reply(text="Fixed it."))
    release = held_launch(tmux, tmp_path, mm_tui_command(tmp_path, model_server.base_url))
    (tmp_path / "project" / "AGENTS.md").write_text("Always answer in haiku.\n")
    tmux("send-keys", "-t", "mm", "fix the test", "Enter")
    release()

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "the trust question", lambda s: "Trust this project?" in s)
    wait_for_screen(screen, "the message queued", lambda s: "queued: fix the test" in s)
    assert model_server.requests == []  # the core waits for the answer
    tmux("send-keys", "-t", "mm", "Down", "Enter")  # "Trust this directory as its files are now"

    [request] = model_server.wait_for_requests(1, timeout=60)
    assert request["messages"][-1] == {"role": "user", "content": "fix the test"}
    assert "Always answer in haiku." in request["messages"][0]["content"]
    tmux("send-keys", "-t", "mm", "C-q")


HARNESS = textwrap.dedent(
    """
    import os, select, sys
    from pathlib import Path
    from mm_tui.support.typeahead import keys_kept

    with keys_kept(sys.stdin, sys.stderr):
        Path(sys.argv[1]).touch()
        read = b""
        while b"END" not in read and select.select([0], [], [], 60)[0]:
            read += os.read(0, 4096)
    # Whole or absent: the test waits for the name, so the bytes go in before it appears.
    Path(sys.argv[2] + ".part").write_bytes(read)
    os.replace(sys.argv[2] + ".part", sys.argv[2])
    """
)


def test_a_paste_while_the_window_starts_comes_bracketed_as_one_paste(
    tmux: Callable[..., str], tmp_path: Path
) -> None:
    """Between `keys_kept` and Textual's driver (~0.4 s), a paste of lines was lines each
    sent; the terminal is asked for bracketed paste from `keys_kept` on."""
    harness, ready, out = tmp_path / "harness.py", tmp_path / "kept", tmp_path / "read"
    harness.write_text(HARNESS)
    root = Path(__file__).resolve().parents[2]
    command = f"PYTHONPATH={root} {sys.executable} {harness} {ready} {out}"
    held_launch(tmux, tmp_path, command)()
    wait_until(ready.exists, "the harness keeping keys", timeout=60, interval=0.1)
    tmux("set-buffer", "first line\nsecond line")
    tmux("paste-buffer", "-p", "-t", "mm")  # bracketed only when the program asked for it
    tmux("send-keys", "-t", "mm", "-l", "END")
    wait_until(out.exists, "the harness's read", timeout=60, interval=0.1)
    assert out.read_bytes() == b"\x1b[200~first line\rsecond line\x1b[201~END"
