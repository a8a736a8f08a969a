"""The API key and the person's terminal stay out of reach of the commands mm-tui runs.

A command the model runs is a process of the person's own user. The scrubbed environment it
gets says nothing of its parent's: without more, it read `OPENAI_API_KEY` from
`/proc/$PPID/environ` and wrote to the person's terminal through `/proc/$PPID/fd/1` (the pane
title, the clipboard by OSC 52, `stty` state), or by name: `/dev/pts/N`, N read from
`/proc/$PPID/stat`'s `tty_nr`. Here a real mm-tui window runs in tmux with the key in its
environment, the scripted model has it run an attack, and the key, the title, the clipboard,
the screen and the terminal's settings are checked afterwards.

The suite may run as root, whose capabilities let it into any process: mm-tui is then started
with none (`setpriv`), which is what a person's own user has. (Measured on Linux 6.18: root
without CAP_SYS_PTRACE alone still read a non-dumpable process's environ; with no capability
it could not, as an ordinary user cannot.)
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import BashTool
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.tmux_session import wait_for_screen
from tests.waiting import wait_until

KEY = "sk-mm-out-of-reach-7f3a91c2"

#: What a hostile model runs: every ancestor's environment (each thread's too), mm-tui's memory
#: map, its terminal through its descriptors, the session's terminal. It says what it could do.
ATTACK = textwrap.dedent(
    r"""
    tr '\0' '\n' < /proc/$$/environ | grep -q MM_TUI_CALL && echo "read own environ"
    p=$PPID
    while [ "$p" -gt 1 ]; do
      if e=$(tr '\0' '\n' < /proc/$p/environ); then echo "read environ $p"; echo "$e" | grep KEY
      else echo "denied environ $p"; fi
      for t in /proc/$p/task/*; do tr '\0' '\n' < $t/environ | grep KEY; done
      p=$(sed 's/.*) . \([0-9]*\) .*/\1/' /proc/$p/stat)
    done 2>/dev/null
    head -c 200 /proc/$PPID/maps >/dev/null 2>&1 && echo "read maps" || echo "denied maps"
    for fd in 0 1 2; do
      if printf '\033]0;PWNED-TITLE\007\033]52;c;UFdORUQ=\007' > /proc/$PPID/fd/$fd; then
        echo "wrote fd $fd"; else echo "denied fd $fd"; fi
    done 2>/dev/null
    stty -F /proc/$PPID/fd/0 sane 2>/dev/null && echo "stty done" || echo "denied stty"
    if printf '\033]0;PWNED-TTY\007' > /dev/tty; then echo "wrote tty"; else echo "denied tty"; fi 2>/dev/null
    tty || true
    nr=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f5)
    pts=/dev/pts/$(( (((nr >> 8) & 0xfff) - 136) * 256 + ((nr & 0xff) | ((nr >> 12) & 0xfff00)) ))
    echo "found $pts"
    if printf '\033]0;PWNED-PTS\007\033]52;c;UFdORUQ=\007FAKE-TEXT-DRAWN' > $pts; then
      echo "pts written"; else echo "pts write refused"; fi 2>/dev/null
    if : < $pts; then echo "pts read"; else echo "pts read refused"; fi 2>/dev/null
    stty -F $pts sane 2>/dev/null && echo "pts stty done" || echo "pts stty refused"
    n=0; for t in /dev/pts/[0-9]*; do : 2>/dev/null > "$t" && n=$((n + 1)); done
    echo "opened $n pseudo-terminals"
    echo attack-over
    """
).strip()


def without_ptrace(argv: list[str]) -> list[str]:
    """`argv` as an ordinary user runs it: as root, with every capability dropped for good."""
    if os.geteuid() != 0:
        return argv
    return ["setpriv", "--bounding-set", "-all", "--inh-caps", "-all", *argv]


def test_a_command_finds_neither_the_key_nor_the_terminal_of_the_window(
    tmux: Callable[..., str], tmp_path: Path, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": ATTACK})]), Reply(text="Answer: done.")
    )
    project = tmp_path / "project"
    project.mkdir()
    argv = without_ptrace([sys.executable, "-m", "mm_tui.cli", "--yolo"])
    env = {
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "TERM": "xterm-256color",
        "OPENAI_BASE_URL": model_server.base_url,
        "OPENAI_API_KEY": KEY,  # in mm-tui's own environment only: the shell never exports it
    }
    command = " ".join([f"{k}={v}" for k, v in env.items()] + argv)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "mm", "-x", "140", "-y", "45")
    tmux("set-option", "-g", "set-clipboard", "on")
    tmux("set-option", "-g", "allow-rename", "on")
    tmux("send-keys", "-t", "mm", f"cd {project} && {command}", "Enter")

    def screen() -> str:
        return tmux("capture-pane", "-p", "-t", "mm")

    wait_for_screen(screen, "the window ready", lambda s: "Ready" in s)
    pane_tty = tmux("display-message", "-p", "-t", "mm", "#{pane_tty}").strip()
    settings = subprocess.run(["stty", "-F", pane_tty, "-g"], capture_output=True, text=True)
    title = tmux("display-message", "-p", "-t", "mm", "#{pane_title}")
    tmux("send-keys", "-t", "mm", "go", "Enter")
    wait_for_screen(screen, "the turn over", lambda s: "Answer: done." in s)
    wait_until(lambda: len(model_server.requests) >= 2, "the tool's output sent", timeout=30,
               interval=0.1)  # fmt: skip
    seen = str(model_server.requests[1]["messages"][-1]["content"])
    shell_pid = tmux("display-message", "-p", "-t", "mm", "#{pane_pid}").strip()
    assert "attack-over" in seen, seen

    assert KEY not in seen, seen
    assert seen.startswith("read own environ\n"), seen  # the reading itself works
    walk = re.findall(r"(read|denied) environ (\d+)", seen)
    assert walk[0][0] == "denied", seen  # mm-tui's own environment: refused
    assert walk[1][1] == shell_pid, seen  # and the walk went on up, past the pane's shell
    for refused in ("denied maps", "denied fd 0", "denied fd 1", "denied fd 2", "denied stty"):
        assert refused in seen, seen
    assert "denied tty" in seen and "not a tty" in seen, seen
    # by name: the attack finds the window's terminal, and opening it or any other one fails
    assert f"found {pane_tty}\n" in seen, seen
    for refused in ("pts write refused", "pts read refused", "pts stty refused", "opened 0 pseudo"):
        assert refused in seen, seen
    assert "FAKE-TEXT-DRAWN" not in screen(), screen()

    assert "PWNED" not in tmux("display-message", "-p", "-t", "mm", "#{pane_title}")
    assert tmux("display-message", "-p", "-t", "mm", "#{pane_title}") == title
    assert "PWNED" not in tmux("list-buffers")
    after = subprocess.run(["stty", "-F", pane_tty, "-g"], capture_output=True, text=True)
    assert settings.returncode == 0 and after.stdout == settings.stdout
    tmux("send-keys", "-t", "mm", "C-q")


def test_the_key_leaves_the_environment_mm_tui_started_with_but_the_config_still_has_it(
    tmp_path: Path,
) -> None:
    """The block `/proc/<pid>/environ` shows is wiped too: a reader the kernel still lets in
    (root) finds no key; `os.environ` has none for a child to inherit by mistake."""
    probe = textwrap.dedent(
        """
        import os, sys
        from pathlib import Path
        from mm_tui.agent.config import load_config
        from mm_tui.support.process_hardening import harden_process
        harden_process()
        block = open(f"/proc/{os.getpid()}/environ", "rb").read()
        print("block-has-key", b"sk-mm-out-of-reach" in block, b"GH_TOKEN" in block)
        print("environ-has-key", "OPENAI_API_KEY" in os.environ, "GH_TOKEN" in os.environ)
        print("config-key", load_config(cwd=Path.cwd()).api_key)
        print("kept", os.environ["KEEP_ME"], "PATH" in os.environ)
        """
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "OPENAI_API_KEY": KEY,
        "GH_TOKEN": "ghp_mm_out_of_reach_0123",
        "KEEP_ME": "plain",
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "block-has-key False False" in done.stdout, done.stdout
    assert "environ-has-key False False" in done.stdout, done.stdout
    assert f"config-key {KEY}" in done.stdout, done.stdout
    assert "kept plain True" in done.stdout, done.stdout


#: What commands do every day, each saying it worked: a rename across directories (git's
#: objects, builds; Landlock refuses it unless the ruleset grants REFER), a directory moved,
#: a named pipe, /dev/null, /dev/stderr, shared memory, a git commit.
EVERYDAY = textwrap.dedent(
    r"""
    mkdir -p a b && echo x > a/f
    python3 -c 'import os; os.rename("a/f", "b/f")' && echo "renamed $(cat b/f)"
    mv b a/ && echo "moved a/b"
    mkfifo pipe && { echo piped > pipe & } && echo "read $(cat pipe)"
    echo gone > /dev/null && echo "null ok"
    echo "to stderr" > /dev/stderr
    if [ -d /dev/shm ]; then echo s > /dev/shm/mm-$$ && rm /dev/shm/mm-$$ && echo "shm ok"
    else echo "shm ok"; fi
    git init -q repo && cd repo && echo t > t && git add t &&
      git -c user.name=t -c user.email=t@t commit -q -m one && echo "committed $(git rev-list --count HEAD)"
    grep NoNewPrivs /proc/self/status
    """
).strip()


def test_a_command_kept_off_the_terminals_still_moves_files_pipes_and_commits(
    tmp_path: Path,
) -> None:
    result = BashTool().run({"command": EVERYDAY}, ToolContext(cwd=tmp_path, max_output=10_000))
    for line in ("renamed x", "moved a/b", "read piped", "null ok", "to stderr", "shm ok",
                 "committed 1"):  # fmt: skip
        assert f"{line}\n" in result.output, result.output
    assert "NoNewPrivs:\t1" in result.output, result.output  # the fence was on


OWN_PTY = "python3 -c 'import pty; pty.openpty(); print(\"own pty opened\")'"


def test_fence_terminals_false_lets_a_command_open_a_pseudo_terminal_of_its_own(
    tmp_path: Path,
) -> None:
    """The fence's price (`script`, `expect`, a new tmux server fail) can be declined."""
    ctx = ToolContext(cwd=tmp_path, max_output=10_000)
    fenced = BashTool().run({"command": OWN_PTY}, ctx)
    assert "own pty opened" not in fenced.output, fenced.output
    assert "[exit code: exit status 1]" in fenced.output, fenced.output
    open_ = BashTool(fence_terminals=False).run({"command": OWN_PTY}, ctx)
    assert "own pty opened\n" in open_.output, open_.output
