"""The seed's terminal display (SPEC §9): a header before each call, a grey preview after it.

Through the real command: piped with `--output-format seed`, and on a real terminal (tmux),
where it is the default and the only place with colour.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

from mm_tui.agent.events import ToolFinished, ToolStarted, ToolStatus
from mm_tui.faces.seed_display import SeedDisplay, call_header, preview
from mm_tui.faces.terminal import TerminalWriter, wants_colour
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.faces.helpers import clean_env, mm, tmux_server
from tests.waiting import wait_until


def header(name: str, arguments: dict, title: str) -> str:
    return call_header(ToolStarted("c1", name, arguments, title))


def test_headers_take_the_seeds_forms() -> None:
    assert header("bash", {"command": "ls -la"}, "bash ls -la") == "🛠️  bash: ls -la"
    assert header("read_skill", {"name": "go"}, "read_skill go") == "📖 read_skill: go"
    assert header("edit_file", {"path": "a.py"}, "edit_file a.py") == "📝 edit_file: a.py"
    assert header("write_file", {"path": "b.py"}, "write_file b.py") == "📝 write_file: b.py"
    assert header("read_file", {}, "read_file a.py:3-9") == "📝 read_file: a.py:3-9"
    lsp = {"action": "definition"}
    assert header("lsp", lsp, "lsp definition main.go greet") == "🔎 lsp: definition main.go greet"
    assert header("lsp", lsp, "lsp definition main.go:9:14") == "🔎 lsp: definition main.go:9:14"
    assert (
        header("lsp", {"action": "rename"}, "lsp rename main.go greet → hello")
        == "🔎 lsp: rename main.go greet → hello"
    )


def test_a_multi_line_command_is_shown_whole_and_indented() -> None:
    command = "cat <<EOF > a.txt\nhello\nEOF"
    assert header("bash", {"command": command}, "bash cat <<EOF > a.txt") == (
        "🛠️  bash: cat <<EOF > a.txt\n  hello\n  EOF"
    )


def test_preview_keeps_preview_lines_and_says_how_many_more() -> None:
    assert preview("a\nb\nc\n", 3) == ["a", "b", "c"]
    assert preview("a\nb\nc\nd\ne", 2) == ["a", "b", "… 3 more lines"]
    assert preview("a\nb", 1) == ["a", "… 1 more line"]
    assert preview(" \n", 5) == ["(no output)"]


def test_a_skills_content_is_not_shown_but_its_failure_is() -> None:
    out = io.StringIO()
    display = SeedDisplay(TerminalWriter(out, out), preview_lines=12)
    for call_id, status, output in (
        ("c1", ToolStatus.DONE, "# Go style\nsecret content"),
        ("c2", ToolStatus.FAILED, 'No skill named "x". Available skills: go'),
    ):
        display(ToolStarted(call_id, "read_skill", {"name": "go"}, "read_skill go"))
        display(ToolFinished(call_id, "read_skill", "read_skill go", status, 0.0, output))
    assert out.getvalue() == (
        '📖 read_skill: go\n📖 read_skill: go\n  No skill named "x". Available skills: go\n'
    )


def test_colour_only_on_a_terminal_and_never_with_no_color() -> None:
    class FakeTerminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert wants_colour(FakeTerminal(), {}) is True
    assert wants_colour(FakeTerminal(), {"NO_COLOR": "1"}) is False
    assert wants_colour(FakeTerminal(), {"TERM": "dumb"}) is False
    assert wants_colour(io.StringIO(), {}) is False


def test_an_escape_sequence_split_across_pieces_of_the_answer_is_removed_whole() -> None:
    out = io.StringIO()
    writer = TerminalWriter(out, out)
    answer = "Done.\x1b]2;PWNED\x07\x1b[5;41m blink \x1b]52;c;cHduZWQ=\x1b\\ end\x9b2J."
    for size in (1, 2, 3, 7):
        out.seek(0)
        out.truncate()
        for start in range(0, len(answer), size):
            writer.stream(answer[start : start + size])
        writer.line("")
        assert out.getvalue() == "Done. blink  end.\n\n", size


def test_piped_seed_display_of_a_real_turn(tmp_path: Path, model_server: ScriptedServer) -> None:
    (tmp_path / ".mm.yaml").write_text("previewLines: 3\n")
    skill = tmp_path / ".mm/skills/greeting.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\ndescription: how to greet\n---\nSay hello, SECRET-SKILL-TEXT.\n")
    model_server.enqueue(
        Reply(text="Looking.", tool_calls=[ToolCall("bash", {"command": "seq 1 5"})]),
        Reply(tool_calls=[ToolCall("read_skill", {"name": "greeting"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "a.txt", "content": "x\n"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "true"})]),
        Reply(text="All done."),
    )
    result = mm(
        "-p", "go", "--output-format", "seed", "--yolo", "--base-url", model_server.base_url,
        "--model", "m", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:-1] == [
        "Looking.",
        "🛠️  bash: seq 1 5",
        "  1",
        "  2",
        "  3",
        "  … 2 more lines",
        "📖 read_skill: greeting",
        "📝 write_file: a.txt",
        "  created a.txt: 1 line",
        "  @@ -0,0 +1 @@",
        "  + 1 | x",
        "🛠️  bash: true",
        "  (no output)",
        "All done.",
    ]
    assert lines[-1].startswith(
        "⚙ 2 command(s) · 📝 1 file op(s) · 📖 1 skill(s) · 🔎 0 lsp call(s) · "
    )
    assert "SECRET-SKILL-TEXT" not in result.stdout
    assert "\x1b" not in result.stdout + result.stderr  # piped: no colour


def test_lsp_calls_show_the_seeds_header_and_the_answer(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    (tmp_path / "main.py").write_text("def greet():\n    return 1\n\n\nprint(greet())\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("lsp", {"action": "definition", "path": "main.py",
                                           "symbol": "greet", "line": 5})]),
        Reply(text="Found it."),
    )  # fmt: skip
    lsp = f"lsp:\n  servers:\n    pylsp:\n      command: [{sys.executable}, -m, pylsp]\n"
    (tmp_path / ".mm.yaml").write_text(lsp + "      extensions: [.py]\n")
    result = mm(
        "-p", "where", "--output-format", "seed", "--base-url", model_server.base_url,
        "--model", "m", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "🔎 lsp: definition main.py:5 greet"
    assert lines[1] == "  main.py:1:5  def greet():"


def test_on_a_real_terminal_the_seed_display_is_the_default_with_grey_output(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    evil = "printf 'one\\ntwo\\n\\033]0;PWNED\\007\\033[41mSTILL-RED\\n'"
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": evil})]),
        Reply(text="Done.\x1b]2;PWNED-2\x07\x1b[5;41m blink"),
    )
    argv = [sys.executable, "-m", "mm_tui.cli", "-p", "go", "--yolo",
            "--base-url", model_server.base_url, "--model", "m"]  # fmt: skip
    env = clean_env(tmp_path, TERM="xterm-256color")
    with tmux_server("seed") as tmux:
        tmux.start(argv, tmp_path, env)
        title_before = tmux.title()
        wait_until(
            tmux.screen, "mm-tui -p exits", until=lambda s: "EXIT=" in s, timeout=30, interval=0.1
        )
        screen = tmux.screen()
        styled = tmux.screen(styled=True)
        title = tmux.title()
    lines = [line.rstrip() for line in screen.splitlines() if line.strip()]
    assert lines[:4] == ["🛠️  bash: " + evil, "  one", "  two", "  STILL-RED"]
    assert lines[4] == "Done. blink"
    assert lines[-1] == "EXIT=0"
    assert re.search(r"\x1b\[90m(\x1b\[[0-9;]*m)*  one", styled)  # grey output on a terminal
    assert "PWNED" not in title and title == title_before
    assert not re.search(r"\x1b\[(?:[0-9]*;)*(?:41|5)(?:;[0-9]*)*m", styled)  # no red, no blink


def test_no_color_turns_colour_off_on_a_terminal(
    tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo hi"})]), Reply(text="ok")
    )
    argv = [sys.executable, "-m", "mm_tui.cli", "-p", "go", "--yolo",
            "--base-url", model_server.base_url, "--model", "m"]  # fmt: skip
    env = clean_env(tmp_path, TERM="xterm-256color", NO_COLOR="1")
    with tmux_server("nocolor") as tmux:
        tmux.start(argv, tmp_path, env)
        wait_until(
            tmux.screen, "mm-tui -p exits", until=lambda s: "EXIT=" in s, timeout=30, interval=0.1
        )
        styled = tmux.screen(styled=True)
    assert "🛠️  bash: echo hi" in styled and "  hi" in styled
    assert "\x1b[90m" not in styled and "\x1b[1m" not in styled


def test_a_bash_call_given_more_time_says_so_after_the_command() -> None:
    title = "bash make test · timeout 10m"
    assert header("bash", {"command": "make test", "timeout": 600}, title) == (
        "🛠️  bash: make test · timeout 10m"
    )
    command = "cd src\nmake test"
    assert header("bash", {"command": command}, "bash cd src\\nmake test · timeout 2m") == (
        "🛠️  bash: cd src\n  make test · timeout 2m"
    )
