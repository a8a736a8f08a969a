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

import codecs
import contextlib
import os
import re
import selectors
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
DEFAULT_TIMEOUT = 30.0
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
TRUNCATED_LINE = "[output truncated: {count} characters not shown]"
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
    "(git --no-pager, apt-get -y). Time limit 30 s. Prefer read_file, write_file and "
    'edit_file for files. Example: {"command": "ls -la src && git status"}'
)
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"command": {"type": "string", "description": "The bash command to run."}},
    "required": ["command"],
}

READ_CHUNK_BYTES = 65_536
POLL_SECONDS = 0.05  # how often cancel and the clock are checked while nothing is printed
EMIT_EVERY_SECONDS = 0.1  # live output goes to the window at most this often
EMIT_PENDING_LIMIT = 16_384  # a flood sends only its latest characters to the live row
OUTPUT_LIMIT_BYTES = 32 << 20  # a flood (`yes`) is stopped here rather than after 30 s
BACKGROUND_GRACE_SECONDS = 0.25  # time spent waiting on the still-open pipe after the exit
BACKGROUND_STREAM_SECONDS = 3.0  # a background job printing without pause: stop after this
TERMINATE_GRACE_SECONDS = 0.2  # between SIGTERM and SIGKILL of the process group
BINARY_SHARE = 0.3  # more than this share of U+FFFD: the output is binary
_ANSI_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]"
)
_CONTROL_CHARACTER = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_EXTRA_ENVIRONMENT = {"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}


def clean_output(text: str) -> str:
    """Text a terminal would have interpreted, made plain: colours off, CRLF to LF."""
    text = _ANSI_SEQUENCE.sub("", text.replace("\r\n", "\n"))
    return _CONTROL_CHARACTER.sub("\ufffd", text)


class HeadTailBuffer:
    """Keeps the first and last `limit / 2` characters of a stream and counts the rest.

    The head says what the command did, the tail how it ended (a failing test, a compiler
    error): both matter more than the middle of a long log.
    """

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 0)
        self.head_limit = self.limit - self.limit // 2
        self.tail_limit = self.limit // 2
        self.head = ""
        self.tail = ""
        self.total = 0

    def append(self, text: str) -> None:
        self.total += len(text)
        if len(self.head) < self.head_limit:
            room = self.head_limit - len(self.head)
            self.head += text[:room]
            text = text[room:]
        if text and self.tail_limit:
            self.tail = (self.tail + text)[-self.tail_limit :]

    def text(self) -> str:
        left_out = self.total - len(self.head) - len(self.tail)
        if left_out <= 0:
            return self.head + self.tail
        marker = TRUNCATED_LINE.format(count=left_out)
        before = "" if self.head.endswith("\n") else "\n"
        return f"{self.head}{before}{marker}\n{self.tail}"


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

    fixed_description = DESCRIPTION
    parameters = PARAMETERS

    def __init__(
        self, timeout: float = DEFAULT_TIMEOUT, max_processes: int = DEFAULT_MAX_PROCESSES
    ) -> None:
        self.timeout = timeout
        self.max_processes = max_processes

    def title(self, args: dict[str, Any]) -> str:
        """`bash <command>`, the whole command with anything that could hide part of it
        (a newline, CR, bidi or zero-width characters, padding) escaped."""
        command = lenient_string(args, "command").strip()
        return f"{NAME} {visible(command, keep_newlines=False)}".rstrip()

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
                env=scrubbed_environment(os.environ, {**_EXTRA_ENVIRONMENT, MARK_NAME: mark}),
                preexec_fn=process_limit(self.max_processes),
            )
        except OSError as error:
            reason = error.strerror or str(error)
            return ToolResult(CANNOT_START.format(reason=reason), ToolStatus.FAILED)
        assert process.stdout is not None
        reader = _PipeReader(process.stdout.fileno(), ctx)
        outcome = _Outcome(ToolStatus.FAILED)
        try:
            outcome = self._follow(process, reader, ctx)
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
        result = _result(reader, outcome, self.timeout)
        if forks_failed:
            line = PROCESS_LIMIT_LINE.format(limit=self.max_processes)
            return ToolResult(f"{result.output}\n{line}", ToolStatus.FAILED)
        return result

    def _follow(
        self, process: subprocess.Popen[bytes], reader: _PipeReader, ctx: ToolContext
    ) -> _Outcome:
        """Read until the shell exits and the pipe closes, or until time, cancel or grace end."""
        deadline = time.monotonic() + self.timeout
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


class _PipeReader:
    """Reads the merged output pipe without blocking past a given wait, decoding as it goes."""

    def __init__(self, descriptor: int, ctx: ToolContext) -> None:
        self.descriptor = descriptor
        self.ctx = ctx
        self.selector = selectors.DefaultSelector()
        self.selector.register(descriptor, selectors.EVENT_READ)
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.buffer = HeadTailBuffer(ctx.max_output)
        self.bytes_read = 0
        self.waited_open = 0.0  # seconds spent in select while the pipe stayed open
        self.closed = False
        self.pending = ""
        self.last_emit = 0.0

    def read_for(self, seconds: float) -> None:
        """Wait up to `seconds` for output and take what is there."""
        if self.closed:
            return
        started = time.monotonic()
        ready = self.selector.select(seconds)
        chunk = os.read(self.descriptor, READ_CHUNK_BYTES) if ready else None
        if chunk == b"":
            self._take(self.decoder.decode(b"", final=True))
            self.close()
            return
        self.waited_open += time.monotonic() - started
        if chunk is None:
            self._emit(force=False)
            return
        self.bytes_read += len(chunk)
        self._take(self.decoder.decode(chunk))

    def close(self) -> None:
        """Stop reading: hand the window what is pending and release the selector."""
        self._emit(force=True)
        if not self.closed:
            self.closed = True
            self.selector.close()

    def drain(self, seconds: float) -> None:
        """After the group was ended: keep what it printed last, for at most `seconds`."""
        limit = time.monotonic() + seconds
        while not self.closed and time.monotonic() < limit:
            self.read_for(max(limit - time.monotonic(), 0.0))
        self._emit(force=True)

    def _take(self, text: str) -> None:
        if not text:
            return
        text = clean_output(text)
        self.buffer.append(text)
        self.ctx.keep_output(text)
        self.pending = (self.pending + text)[-EMIT_PENDING_LIMIT:]
        self._emit(force=False)

    def _emit(self, force: bool) -> None:
        now = time.monotonic()
        if self.pending and (force or now - self.last_emit >= EMIT_EVERY_SECONDS):
            self.ctx.emit_output(self.pending)
            self.pending = ""
            self.last_emit = now


def _end_process_group(process: subprocess.Popen[bytes]) -> None:
    end_group_sync(process, TERMINATE_GRACE_SECONDS)


def _result(reader: _PipeReader, outcome: _Outcome, timeout: float) -> ToolResult:
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
            endings.append(SIGNAL_LINE.format(name=_signal_name(-code)))
        if code != 0:
            status = ToolStatus.FAILED
    if not endings:
        return ToolResult(output or NO_OUTPUT, status)
    body = output.rstrip("\n")
    return ToolResult("\n".join([body, *endings]) if body else "\n".join(endings), status)


def _signal_name(number: int) -> str:
    """`killed`, `terminated`, `segmentation fault`: the words Go's exec package used."""
    try:
        description = signal.strsignal(number)
    except ValueError:
        description = None
    return (description or f"signal {number}").lower()
