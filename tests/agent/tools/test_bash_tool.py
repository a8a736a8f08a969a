"""The bash tool against real shells and real processes (SPEC §4, tools-reference `bash`)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import (
    BACKGROUND_LINE,
    FLOOD_LINE,
    NO_OUTPUT,
    OUTPUT_LIMIT_BYTES,
    BashTool,
    HeadTailBuffer,
)
from tests.waiting import wait_until

pytestmark = pytest.mark.timeout(60)


def context(cwd: Path, max_output: int = 10_000) -> ToolContext:
    return ToolContext(cwd=cwd, max_output=max_output)


def run(command: str, cwd: Path, max_output: int = 10_000, timeout: float = 30.0):
    return BashTool(timeout=timeout).run({"command": command}, context(cwd, max_output))


def process_is_gone(pid: int) -> bool:
    """Gone, or a zombie nobody reaped yet (a container's init may not reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state == "Z"


def test_stdout_and_stderr_are_merged_in_the_order_they_were_printed(tmp_path: Path) -> None:
    result = run("echo one; echo two >&2; echo three; echo four >&2", tmp_path)
    assert result.output == "one\ntwo\nthree\nfour\n"
    assert result.status is ToolStatus.DONE


def test_a_non_zero_exit_ends_the_output_with_its_exit_status(tmp_path: Path) -> None:
    result = run("echo broken; exit 3", tmp_path)
    assert result.output == "broken\n[exit code: exit status 3]"
    assert result.status is ToolStatus.FAILED


def test_a_non_zero_exit_without_output_is_only_the_exit_line(tmp_path: Path) -> None:
    assert run("exit 2", tmp_path).output == "[exit code: exit status 2]"


def test_a_process_killed_by_a_signal_says_which_signal_as_go_did(tmp_path: Path) -> None:
    result = run("kill -9 $$", tmp_path)
    assert result.output == "[exit code: signal: killed]"
    assert result.status is ToolStatus.FAILED


def test_a_silent_success_answers_no_output(tmp_path: Path) -> None:
    result = run("true", tmp_path)
    assert result.output == NO_OUTPUT == "(no output)"
    assert result.status is ToolStatus.DONE


def test_the_command_runs_in_the_context_directory(tmp_path: Path) -> None:
    assert run("pwd", tmp_path).output == f"{tmp_path}\n"


def test_each_call_gets_a_fresh_shell(tmp_path: Path) -> None:
    tool = BashTool()
    tool.run({"command": "cd /; export LEFT_BEHIND=yes"}, context(tmp_path))
    result = tool.run({"command": 'pwd; echo "[$LEFT_BEHIND]"'}, context(tmp_path))
    assert result.output == f"{tmp_path}\n[]\n"


def test_a_command_reading_stdin_gets_end_of_file_at_once(tmp_path: Path) -> None:
    assert run("cat", tmp_path).output == NO_OUTPUT
    assert run('read line; echo "got:[$line] status:$?"', tmp_path).output == "got:[] status:1\n"


def test_the_time_limit_ends_the_command_and_says_so(tmp_path: Path) -> None:
    result = run("echo begun; sleep 20; echo never", tmp_path, timeout=1)
    assert result.output == "begun\n[error: 1s timeout exceeded]"
    assert result.status is ToolStatus.TIMED_OUT


def test_the_default_time_limit_is_thirty_seconds_as_the_spec_says() -> None:
    assert BashTool().timeout == 30.0


def test_the_timeout_line_follows_the_configured_limit(tmp_path: Path) -> None:
    result = run("sleep 20", tmp_path, timeout=0.5)
    assert result.output == "[error: 0.5s timeout exceeded]"


def test_the_time_limit_ends_grandchildren_too(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    command = f"(sleep 60; echo late) & echo $! > {pid_file}; sleep 20"
    result = run(command, tmp_path, timeout=1)
    assert result.status is ToolStatus.TIMED_OUT
    pid = int(pid_file.read_text())
    wait_until(lambda: process_is_gone(pid), "the process is gone", timeout=10, interval=0.02)


def test_an_interrupt_ends_the_whole_process_group_and_says_so(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    seen: list[str] = []
    ctx = context(tmp_path)

    def on_output(text: str) -> None:
        seen.append(text)
        if "ready" in "".join(seen):
            ctx.cancel.set()

    ctx.emit_output = on_output
    command = f"sleep 60 & echo $! > {pid_file}; echo ready; wait"
    result = BashTool().run({"command": command}, ctx)
    assert result.status is ToolStatus.INTERRUPTED
    assert result.output == "ready\n[interrupted by the user]"
    pid = int(pid_file.read_text())
    wait_until(lambda: process_is_gone(pid), "the process is gone", timeout=10, interval=0.02)


def test_an_interrupt_from_another_thread_stops_a_silent_command(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    started = threading.Event()
    ctx.emit_output = lambda text: started.set()

    def interrupt() -> None:
        started.wait(20)
        ctx.cancel.set()

    threading.Thread(target=interrupt, daemon=True).start()
    result = BashTool().run({"command": "echo go; sleep 25"}, ctx)
    assert result.status is ToolStatus.INTERRUPTED
    assert result.output.endswith("[interrupted by the user]")


def test_a_background_process_holding_the_pipe_does_not_hang_the_call(tmp_path: Path) -> None:
    result = run("sleep 100 & echo $!; echo started", tmp_path)
    pid_text, started, note = result.output.split("\n")
    try:
        assert started == "started"
        assert note == BACKGROUND_LINE
        assert result.status is ToolStatus.DONE
        assert not process_is_gone(int(pid_text)), "a background job is left running"
    finally:
        os.kill(int(pid_text), 9)


def test_a_slow_output_sink_after_the_exit_is_not_taken_for_a_background_job(
    tmp_path: Path,
) -> None:
    """CI at high load: the shell exited, its last output and end of file were waiting, but the
    thread was busy (here: keeping the full output on a slow disk) past the grace. Only time
    spent waiting on an open pipe may count as a background job holding it."""
    ctx = context(tmp_path)
    ctx.keep_output = lambda text: time.sleep(0.6)
    result = BashTool().run({"command": "echo one; sleep 0.2; echo two"}, ctx)
    assert result.output == "one\ntwo\n"
    assert result.status is ToolStatus.DONE


def test_a_background_job_that_keeps_printing_still_ends_the_call(tmp_path: Path) -> None:
    # the pid goes to a file: printed, it could come after the job's first tick
    command = "(while true; do echo tick; sleep 0.01; done) & echo $! > job.pid; echo started"
    result = run(command, tmp_path)
    pid_text = (tmp_path / "job.pid").read_text().strip()
    try:
        assert "started\n" in result.output
        assert result.output.endswith(BACKGROUND_LINE)
        assert result.status is ToolStatus.DONE
    finally:
        os.kill(int(pid_text), 9)


def test_a_background_process_with_its_output_redirected_is_not_mentioned(tmp_path: Path) -> None:
    result = run("sleep 100 > /dev/null 2>&1 & echo $!", tmp_path)
    try:
        assert result.output.count("\n") == 1
        assert BACKGROUND_LINE not in result.output
    finally:
        os.kill(int(result.output.strip()), 9)


def test_a_command_printing_without_end_is_stopped_at_the_output_limit(tmp_path: Path) -> None:
    result = run("yes", tmp_path, max_output=100)
    assert result.status is ToolStatus.FAILED
    assert result.output.endswith("\n" + FLOOD_LINE.format(limit=OUTPUT_LIMIT_BYTES >> 20))
    assert result.output.startswith("y\ny\n")
    assert "[output truncated: " in result.output


def test_output_is_cut_to_max_output_keeping_head_and_tail_and_saying_how_much(
    tmp_path: Path,
) -> None:
    full = "".join(f"{n}\n" for n in range(1, 20_001))
    result = run("seq 1 20000", tmp_path, max_output=1000)
    head, tail = full[:500], full[-500:]
    left_out = len(full) - 1000
    assert head.endswith("\n")  # the marker then starts its own line without a blank one
    assert result.output == f"{head}[output truncated: {left_out} characters not shown]\n{tail}"


def test_the_exit_line_comes_after_a_truncated_output(tmp_path: Path) -> None:
    result = run("seq 1 5000; exit 4", tmp_path, max_output=200)
    assert result.output.endswith("4999\n5000\n[exit code: exit status 4]")
    assert "[output truncated: " in result.output


def test_binary_output_is_summarised_in_one_line(tmp_path: Path) -> None:
    result = run("head -c 1000 /dev/urandom", tmp_path)
    assert result.output == (
        "[binary output: 1000 bytes not shown; pipe it through `od -c | head` to see it]"
    )


def test_a_few_undecodable_bytes_are_replaced_not_fatal(tmp_path: Path) -> None:
    result = run(r"printf 'caf\xe9 au lait\n'", tmp_path)
    assert result.output == "caf\ufffd au lait\n"


def test_colour_sequences_and_crlf_are_made_plain(tmp_path: Path) -> None:
    result = run(r"printf '\033[31mred\033[0m\r\nplain\n'", tmp_path)
    assert result.output == "red\nplain\n"


def test_live_output_reaches_the_window_while_the_command_runs(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    pieces: list[str] = []
    ctx.emit_output = pieces.append
    result = BashTool().run({"command": "for i in 1 2 3; do echo line$i; sleep 0.2; done"}, ctx)
    assert "".join(pieces) == "line1\nline2\nline3\n" == result.output
    assert len(pieces) >= 2, "the output came in one piece at the end, not live"


def test_a_missing_working_directory_is_reported_not_raised(tmp_path: Path) -> None:
    result = run("true", tmp_path / "gone")
    assert result.output.startswith("[error: cannot start bash: ")
    assert result.status is ToolStatus.FAILED


@pytest.mark.parametrize("args", [{}, {"command": 5}, {"command": None}, {"cmd": "ls"}])
def test_a_missing_or_mistyped_command_is_named_to_the_model(args: dict, tmp_path: Path) -> None:
    result = BashTool().run(args, context(tmp_path))
    assert result.output == '[error: bash needs "command" (a string)]'
    assert result.status is ToolStatus.FAILED


def test_permission_is_asked_only_when_there_is_a_command_to_run() -> None:
    tool = BashTool()
    assert tool.needs_permission({"command": "rm -rf build"})
    assert not tool.needs_permission({})
    assert tool.rejection_text == "[command rejected by the user]"


def test_the_title_is_the_whole_command_newlines_escaped_and_the_preview_the_whole() -> None:
    tool = BashTool()
    args = {"command": "ls -la\necho second"}
    assert tool.title(args) == "bash ls -la\\necho second"  # the title hides nothing
    assert tool.title({}) == "bash"
    preview = tool.preview(args, ToolContext(cwd=Path("/")))
    assert preview.detail == "ls -la\necho second"


def test_the_schema_is_short_and_has_an_example() -> None:
    schema = BashTool().schema()["function"]
    assert schema["name"] == "bash"
    assert schema["parameters"]["required"] == ["command"]
    assert 'Example: {"command": ' in schema["description"]


def test_the_head_tail_buffer_keeps_everything_below_its_limit() -> None:
    buffer = HeadTailBuffer(10)
    for piece in ("abc", "def", "ghij"):
        buffer.append(piece)
    assert buffer.text() == "abcdefghij"
    buffer.append("k")
    assert buffer.text() == "abcde\n[output truncated: 1 characters not shown]\nghijk"


def test_a_shell_that_closes_its_output_early_is_still_waited_for(tmp_path: Path) -> None:
    marker = tmp_path / "finished"
    result = run(f"exec >&- 2>&-; sleep 0.3; touch {marker}", tmp_path)
    assert result.output == NO_OUTPUT
    assert marker.exists(), "the call returned before the shell had finished"


def test_an_interrupt_that_came_before_the_call_runs_nothing(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    ctx.cancel.set()
    result = BashTool().run({"command": f"touch {tmp_path / 'ran'}"}, ctx)
    assert (result.output, result.status) == ("[interrupted by the user]", ToolStatus.INTERRUPTED)
    assert not (tmp_path / "ran").exists()


def test_no_file_descriptor_is_leaked_whatever_the_ending(tmp_path: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    for command in ("echo ok", "exit 1", "sleep 1 & echo held", "sleep 5"):
        run(command, tmp_path, timeout=0.3)
    assert len(os.listdir("/proc/self/fd")) == before
