"""`bash`: one shell command, in a fresh `bash -c`, bounded in time and output (SPEC §4).

The command runs in its own session (process group) with stdin from /dev/null, stdout and
stderr merged in one pipe so their order is kept. Three things end a call: the shell exits,
the time limit passes, or the person interrupts; the last two end the whole process group,
grandchildren included. A background job (`server &`) may keep the pipe open after the shell
exits: reading then stops after a short grace period instead of hanging, and the output says
so. The pipe is read in chunks with a bounded memory: the first and last parts of a flood
such as `yes` are kept, the middle counted.

Choices where the seeds are silent:
- A process killed by a signal ends with `[exit code: signal: killed]`, as Go's
  `ProcessState.String()` wrote it for mm (`exit status N` is kept for ordinary exits).
- A successful command with no output answers `(no output)`, to the model as to the window
  (the seeds' terminal display): an empty tool message reads to a small model as a failure.
- Output mostly made of undecodable bytes is replaced by one line giving its size.
- ANSI colour sequences are removed; other control characters become U+FFFD.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.rules import Rule, Subject, command_grant
from mm_tui.agent.tools.arguments import ArgumentProblem, argument_map, lenient_string, string_field
from mm_tui.agent.tools.base import (
    INTERRUPTED,
    Tool,
    ToolContext,
    ToolKind,
    ToolPreview,
    ToolResult,
)
from mm_tui.agent.tools.bash_output import PipeReader
from mm_tui.agent.tools.bash_timeout import (
    DEFAULT_CEILING_SECONDS,
    DEFAULT_SECONDS,
    FIELD,
    TimeoutPolicy,
)
from mm_tui.support.call_processes import (
    MARK_NAME,
    end_marked,
    new_mark,
    process_limit,
    set_up_once,
)
from mm_tui.support.process_group import (
    end_group_sync,
    group_alive,
    keep_reaping,
    reap_background_groups,
    reap_group_zombies,
)
from mm_tui.support.secret_env import scrubbed_environment
from mm_tui.support.terminal_fence import fenced_popen
from mm_tui.support.terminal_text import visible

NAME = "bash"
REJECTED = "[command rejected by the user]"
TIMEOUT_LINE = "[error: {seconds}s timeout exceeded]"
EXIT_LINE = "[exit code: exit status {code}]"
SIGNAL_LINE = "[exit code: signal: {name}]"
NO_OUTPUT = "(no output)"
BACKGROUND_LINE = (
    "[note: a background process still holds the output, so its later output is not shown; "
    "redirect it to a file (command > out.log 2>&1 &) to keep it]"
)
BINARY_OUTPUT = "[binary output: {size} bytes not shown; pipe it through `od -c | head` to see it]"
FLOOD_LINE = (
    "[error: the command printed more than {limit} MiB, so it was stopped; "
    "redirect its output to a file and read the part you need]"
)
CANNOT_START = "[error: cannot start bash: {reason}]"
PROCESS_LIMIT_LINE = (
    "[error: the command hit the limit of {limit} processes (maxProcesses), so forks failed]"
)
DEFAULT_MAX_PROCESSES = 512  # a build with many jobs fits; a fork bomb does not
_FORK_FAILED = re.compile(r"fork: (?:retry: )?Resource temporarily unavailable")

DESCRIPTION = (
    "Run a shell command with bash -c in the project directory and get its output "
    "(stdout and stderr together). No input can be typed: use non-interactive flags "
    "(git --no-pager, apt-get -y). Time limit {limit}. Prefer read_file, write_file and "
    'edit_file for files. Example: {{"command": "ls -la src && git status"}}'
)
#: How the limit reads in the description when a call may ask for more.
LIMIT_WITH_CEILING = "{default:g} s (a long build or test may set timeout, up to {ceiling:g} s)"
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The bash command to run."},
        FIELD: {"type": "integer", "description": "Seconds; only when more time is needed."},
    },
    "required": ["command"],
}

POLL_SECONDS = 0.05  # how often cancel and the clock are checked while nothing is printed
OUTPUT_LIMIT_BYTES = 32 << 20  # a flood (`yes`) is stopped here rather than after 30 s
BACKGROUND_GRACE_SECONDS = 0.25  # time spent waiting on the still-open pipe after the exit
BACKGROUND_STREAM_SECONDS = 3.0  # a background job printing without pause: stop after this
TERMINATE_GRACE_SECONDS = 0.2  # between SIGTERM and SIGKILL of the process group
BINARY_SHARE = 0.3  # more than this share of U+FFFD: the output is binary
#: Set for every command, here or in an editor's terminal: no pager, no password prompt.
COMMAND_ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


@dataclass
class _Outcome:
    """How the command ended, as seen by the reading loop."""

    status: ToolStatus = ToolStatus.DONE
    return_code: int | None = None
    background_kept_pipe: bool = False
    flooded: bool = False


class BashTool(Tool):
    """Runs `bash -c <command>`; asks permission; honours interrupt and the time limit."""

    name = NAME
    kind = ToolKind.COMMAND
    rejection_text = REJECTED

    parameters = PARAMETERS

    def __init__(
        self,
        timeout: float = DEFAULT_SECONDS,
        max_processes: int = DEFAULT_MAX_PROCESSES,
        timeout_max: float = DEFAULT_CEILING_SECONDS,
        *,
        fence_terminals: bool = True,
    ) -> None:
        self.timeout = timeout
        self.max_processes = max_processes
        self.fence_terminals = fence_terminals  # the `fenceTerminals` setting
        self.limits = TimeoutPolicy(timeout, max(timeout_max, timeout))

    @property
    def description(self) -> str:
        """The seed's description with the session's limit, and the ceiling a call may ask."""
        limits = self.limits
        limit = (
            LIMIT_WITH_CEILING.format(default=limits.default, ceiling=limits.ceiling)
            if limits.ceiling > limits.default
            else f"{limits.default:g} s"
        )
        return DESCRIPTION.format(limit=limit)

    def title(self, args: dict[str, Any]) -> str:
        """`bash <command>`, the whole command with anything that could hide part of it
        (a newline, CR, bidi or zero-width characters, padding) escaped; then
        ` · timeout 10m` when the call runs with another limit than the default."""
        command = lenient_string(args, "command").strip()
        title = f"{NAME} {visible(command, keep_newlines=False)}".rstrip()
        return f"{title}{self.limits.row_label(args)}"

    def subject(self, args: dict[str, Any], ctx: ToolContext) -> Subject | None:
        command = lenient_string(args, "command")
        return Subject(NAME, command=command) if command.strip() else None

    def grant(self, args: dict[str, Any], ctx: ToolContext) -> Rule:
        """`s` allows this command's prefix (`git status …`), never every command."""
        return command_grant(lenient_string(args, "command").strip())

    def needs_permission(self, args: dict[str, Any], ctx: ToolContext | None = None) -> bool:
        """No question when there is no command to run: the call only returns an error."""
        return bool(lenient_string(args, "command").strip())

    def preview(self, args: dict[str, Any], ctx: ToolContext) -> ToolPreview:
        return ToolPreview(title=self.title(args), detail=lenient_string(args, "command"))

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            command = string_field(argument_map(args), NAME, "command")
        except ArgumentProblem as problem:
            return ToolResult(str(problem), ToolStatus.FAILED)
        if not command.strip():
            return ToolResult(f'[error: {NAME} needs "command" (a string)]', ToolStatus.FAILED)
        if ctx.cancel.is_set():  # interrupted while waiting for permission: run nothing
            return ToolResult(INTERRUPTED, ToolStatus.INTERRUPTED)
        limit = self.limits.for_call(args)
        if ctx.commands is not None:  # an editor's terminal runs it, within the same bounds
            return _with_note(ctx.commands.run(command, ctx, limit.seconds), limit.note)
        set_up_once()
        reap_background_groups()  # earlier commands' background jobs that ended since
        mark = new_mark()
        try:
            process = fenced_popen(  # the person's terminal out of reach by name too
                ["bash", "-c", command],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                cwd=ctx.cwd,
                start_new_session=True,
                env=scrubbed_environment(os.environ, {**COMMAND_ENVIRONMENT, MARK_NAME: mark}),
                preexec_fn=process_limit(self.max_processes),
                fence=self.fence_terminals,
            )
        except OSError as error:
            reason = error.strerror or str(error)
            return ToolResult(CANNOT_START.format(reason=reason), ToolStatus.FAILED)
        assert process.stdout is not None
        reader = PipeReader(process.stdout.fileno(), ctx)
        outcome = _Outcome(ToolStatus.FAILED)
        try:
            outcome = self._follow(process, reader, ctx, limit.seconds)
        finally:
            reader.close()
            process.stdout.close()
            if process.poll() is None:  # only after an unexpected error in the loop
                _end_process_group(process)
            forks_failed = bool(_FORK_FAILED.search(reader.buffer.head + reader.buffer.tail))
            if outcome.status is not ToolStatus.DONE or forks_failed:  # setsid, daemons too
                end_marked(mark, TERMINATE_GRACE_SECONDS)
            elif group_alive(process.pid):  # left running in the background, by design
                keep_reaping(process.pid)
            reap_group_zombies(process.pid)
        result = _result(reader, outcome, limit.seconds)
        if forks_failed:
            line = PROCESS_LIMIT_LINE.format(limit=self.max_processes)
            result = ToolResult(f"{result.output}\n{line}", ToolStatus.FAILED)
        return _with_note(result, limit.note)

    def _follow(
        self,
        process: subprocess.Popen[bytes],
        reader: PipeReader,
        ctx: ToolContext,
        seconds: float,
    ) -> _Outcome:
        """Read until the shell exits and the pipe closes, or until time, cancel or grace end."""
        deadline = time.monotonic() + seconds
        exited_at: float | None = None
        waited_at_exit = 0.0
        while True:
            if ctx.cancel.is_set() or time.monotonic() >= deadline:
                status = ToolStatus.INTERRUPTED if ctx.cancel.is_set() else ToolStatus.TIMED_OUT
                _end_process_group(process)
                reader.drain(BACKGROUND_GRACE_SECONDS)
                return _Outcome(status)
            if reader.bytes_read > OUTPUT_LIMIT_BYTES:
                _end_process_group(process)
                return _Outcome(ToolStatus.FAILED, flooded=True)
            if exited_at is None and process.poll() is not None:
                exited_at = time.monotonic()
                waited_at_exit = reader.waited_open
            if reader.closed:
                if exited_at is not None:
                    return _Outcome(return_code=process.returncode)
                # the pipe closed but the shell runs on (`exec >&-; sleep 5`)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(timeout=POLL_SECONDS)
                continue
            # Only time spent waiting on the open pipe counts, never wall time: on a loaded
            # machine the thread may sleep past any grace while end of file is already there.
            if exited_at is not None and (
                reader.waited_open - waited_at_exit >= BACKGROUND_GRACE_SECONDS
                or time.monotonic() - exited_at > BACKGROUND_STREAM_SECONDS
            ):
                return _Outcome(return_code=process.returncode, background_kept_pipe=True)
            reader.read_for(min(POLL_SECONDS, max(deadline - time.monotonic(), 0.0)))


def _end_process_group(process: subprocess.Popen[bytes]) -> None:
    end_group_sync(process, TERMINATE_GRACE_SECONDS)


def _with_note(result: ToolResult, note: str) -> ToolResult:
    """The result, with the line telling the model its `timeout` was not used as asked."""
    if not note:
        return result
    return ToolResult(f"{result.output.rstrip(chr(10))}\n{note}", result.status)


def _result(reader: PipeReader, outcome: _Outcome, timeout: float) -> ToolResult:
    """The model's text: the output, then one line for how the command ended."""
    output = reader.buffer.text()
    if output and output.count("\ufffd") > BINARY_SHARE * len(output):
        output = BINARY_OUTPUT.format(size=reader.bytes_read)
    endings: list[str] = []
    status = outcome.status
    if status is ToolStatus.TIMED_OUT:
        endings.append(TIMEOUT_LINE.format(seconds=f"{timeout:g}"))
    elif status is ToolStatus.INTERRUPTED:
        endings.append(INTERRUPTED)
    elif outcome.flooded:
        endings.append(FLOOD_LINE.format(limit=OUTPUT_LIMIT_BYTES >> 20))
    else:
        if outcome.background_kept_pipe:
            endings.append(BACKGROUND_LINE)
        code = outcome.return_code or 0
        if code > 0:
            endings.append(EXIT_LINE.format(code=code))
        elif code < 0:
            endings.append(SIGNAL_LINE.format(name=signal_words(-code)))
        if code != 0:
            status = ToolStatus.FAILED
    return ended_with(output, endings, status)


def ended_with(output: str, endings: list[str], status: ToolStatus) -> ToolResult:
    """The command's output then its ending lines (exit code, timeout...), as the seed shows
    them, for a local run and an editor's terminal alike; `NO_OUTPUT` when there is neither."""
    if not endings:
        return ToolResult(output or NO_OUTPUT, status)
    body = output.rstrip("\n")
    return ToolResult("\n".join([body, *endings]) if body else "\n".join(endings), status)


def signal_words(number: int) -> str:
    """`killed`, `terminated`, `segmentation fault`: the words Go's exec package used (also for
    a command an editor's terminal ran, `acp/client_terminals.py`)."""
    try:
        description = signal.strsignal(number)
    except ValueError:
        description = None
    return (description or f"signal {number}").lower()
