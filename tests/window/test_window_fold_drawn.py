"""A row folded or unfolded above other blocks is drawn at once, in a real terminal.

Pilot tests see widgets, not what the terminal got: after the transcript learned to grow in
place while an answer streams (for less CPU), unfolding a finished row changed the widgets but
left the terminal showing the old lines until something else redrew. Found by the window
bench's fold probe; this drives mm-tui in tmux and reads the screen.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from scripted_server import Reply, ScriptedServer, ToolCall
from tests.tmux_session import mm_tui_command, wait_for_screen


def test_enter_on_a_finished_row_shows_and_hides_its_output_on_the_terminal(
    tmux: Callable[..., str], tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "printf 'row-%s-body\\n' output"})]),
        Reply(text="All done below the row."),
    )
    project = tmp_path / "project"
    project.mkdir()
    command = mm_tui_command(tmp_path, model_server.base_url)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "100", "-y", "30")
    tmux("send-keys", "-t", "mm", f"cd {project} && {command}", "Enter")

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "Ready", lambda s: "Ready" in s)
    tmux("send-keys", "-t", "mm", "go", "Enter")
    wait_for_screen(
        screen, "the turn over", lambda s: "All done below the row." in s and "Ready" in s
    )
    assert "row-output-body" not in screen()  # a finished row is folded...
    assert "Fold/unfold" not in screen()  # (the prompt has the focus)
    tmux("send-keys", "-t", "mm", "BTab")  # ...the row gets the focus (its keys in the footer)
    wait_for_screen(screen, "the row focused", lambda s: "Fold/unfold" in s, 20)
    tmux("send-keys", "-t", "mm", "Enter")  # unfold
    wait_for_screen(screen, "the row unfolded", lambda s: "row-output-body" in s, 20)
    tmux("send-keys", "-t", "mm", "Enter")  # fold again
    wait_for_screen(screen, "the row folded", lambda s: "row-output-body" not in s, 20)
    tmux("send-keys", "-t", "mm", "C-q")
