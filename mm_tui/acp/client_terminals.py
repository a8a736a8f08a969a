"""bash in the editor's terminal, when the client offers `terminal/*`, with bash's own bounds
(docs/decisions/0010-acp-client-fs-and-terminal.md).

The editor runs `env -i <mm-tui's scrubbed environment> bash -c <command>` in the session's
cwd: the command sees exactly the environment mm-tui's own runs give it (secrets removed, the
pager off, the call's mark), not the editor's. The tool call embeds the terminal, so the editor
shows it live. mm-tui keeps the clock: at the time limit, or when the person interrupts, it
kills the terminal and ends every process carrying the call's mark, as for its own runs. The
model reads the same text as from a local run: the output cut to `maxOutput` (head and tail),
then `[exit code: exit status N]`, `[error: 30s timeout exceeded]`, or the interrupt.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from dataclasses import dataclass
from pathlib import Path

from acp import tool_terminal_ref, update_tool_call
from acp.interfaces import Client

from mm_tui.acp.session import SessionBridge
from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import INTERRUPTED, ToolContext, ToolResult
from mm_tui.agent.tools.bash import (
    CANNOT_START,
    COMMAND_ENVIRONMENT,
    EXIT_LINE,
    SIGNAL_LINE,
    TIMEOUT_LINE,
    ended_with,
    signal_words,
)
from mm_tui.agent.tools.bash_output import HeadTailBuffer, clean_output
from mm_tui.support.call_processes import MARK_NAME, end_marked, new_mark
from mm_tui.support.secret_env import scrubbed_environment

log = logging.getLogger(__name__)

#: What the editor keeps of the output: enough for `maxOutput` characters of UTF-8, and more.
OUTPUT_BYTES_PER_CHARACTER = 4
POLL_SECONDS = 0.05  # how often the clock and the interrupt are looked at while it runs
#: Beyond the time limit: creating, killing, reading and releasing the terminal.
ANSWER_SECONDS = 30.0
EDITOR_CUT = "[output truncated by the editor: it kept only {limit} bytes of the output]"
NO_ANSWER = "the editor's terminal did not answer within {seconds}s; it may still be running"


@dataclass
class _End:
    """What the terminal said when the command ended."""

    output: str = ""
    truncated: bool = False
    exit_code: int | None = None
    signal: str | None = None
    stopped: ToolStatus | None = None  # TIMED_OUT or INTERRUPTED when mm-tui ended it


class ClientTerminals:
    """`CommandRunner` over ACP: one editor terminal per command."""

    def __init__(self, bridge: SessionBridge, cwd: Path) -> None:
        self.bridge = bridge
        self.cwd = cwd

    def run(self, command: str, ctx: ToolContext, timeout: float) -> ToolResult:
        call_id = self.bridge.translator.running_call
        limit = OUTPUT_BYTES_PER_CHARACTER * (ctx.max_output + 1)
        try:
            end = self.bridge.call(
                lambda: self._run(call_id, command, ctx, timeout, limit), timeout + ANSWER_SECONDS
            )
        except TimeoutError:
            log.debug("the editor's terminal did not answer", exc_info=True)
            reason = NO_ANSWER.format(seconds=f"{timeout + ANSWER_SECONDS:g}")
            return ToolResult(CANNOT_START.format(reason=reason), ToolStatus.FAILED)
        except Exception as error:  # the editor refused the terminal: one line, nothing run
            log.debug("terminal/create failed", exc_info=True)
            reason = f"the editor's terminal: {said(error)}"
            return ToolResult(CANNOT_START.format(reason=reason), ToolStatus.FAILED)
        ctx.keep_output(end.output)
        return result_of(end, timeout, ctx.max_output, limit)

    async def _run(
        self, call_id: str, command: str, ctx: ToolContext, timeout: float, limit: int
    ) -> _End:
        client, session_id = self.bridge.client, self.bridge.session_id
        mark = new_mark()
        environment = scrubbed_environment(None, {**COMMAND_ENVIRONMENT, MARK_NAME: mark})
        settings = [f"{name}={value}" for name, value in sorted(environment.items())]
        created = await client.create_terminal(
            session_id=session_id,
            command="env",
            args=["-i", *settings, "bash", "-c", command],
            cwd=str(self.cwd),
            output_byte_limit=limit,
        )
        terminal_id = created.terminal_id
        self._embed(call_id, terminal_id)
        try:
            return await self._follow(client, terminal_id, mark, ctx, timeout)
        finally:
            try:
                await client.release_terminal(session_id=session_id, terminal_id=terminal_id)
            except Exception:  # released or gone already: the output was read
                log.debug("terminal/release failed", exc_info=True)

    def _embed(self, call_id: str, terminal_id: str) -> None:
        """The call shows the terminal; its title again after, for Zed labels the terminal
        with the call's title only once the terminal is in it (not `env -i …`)."""
        if not call_id:
            return
        self.bridge.translator.terminals[call_id] = terminal_id
        terminal = [tool_terminal_ref(terminal_id)]
        self.bridge.send(update_tool_call(call_id, status="in_progress", content=terminal))
        title = self.bridge.translator.title_of(call_id)
        if title:
            self.bridge.send(update_tool_call(call_id, title=title))

    async def _follow(
        self, client: Client, terminal_id: str, mark: str, ctx: ToolContext, timeout: float
    ) -> _End:
        session_id = self.bridge.session_id
        loop = asyncio.get_running_loop()
        waiting = asyncio.ensure_future(
            client.wait_for_terminal_exit(session_id=session_id, terminal_id=terminal_id)
        )
        deadline = loop.time() + timeout
        end = _End()
        try:
            while not waiting.done():
                if ctx.cancel.is_set() or loop.time() >= deadline:
                    cancelled = ctx.cancel.is_set()
                    end.stopped = ToolStatus.INTERRUPTED if cancelled else ToolStatus.TIMED_OUT
                    await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
                    await asyncio.to_thread(end_marked, mark)  # what left its process group
                    await asyncio.wait({waiting}, timeout=ANSWER_SECONDS / 3)
                    break
                await asyncio.wait({waiting}, timeout=POLL_SECONDS)
            if waiting.done() and waiting.exception() is None:
                status = waiting.result()
                end.exit_code, end.signal = status.exit_code, status.signal
            output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
        finally:
            if not waiting.done():
                waiting.cancel()
        end.output, end.truncated = output.output, output.truncated
        if end.exit_code is None and end.signal is None and output.exit_status is not None:
            end.exit_code, end.signal = output.exit_status.exit_code, output.exit_status.signal
        return end


def result_of(end: _End, timeout: float, max_output: int, limit: int) -> ToolResult:
    """The model's text, as bash's own run writes it: the output cut to `max_output`, then
    one line for how the command ended."""
    kept = HeadTailBuffer(max_output)
    kept.append(clean_output(end.output))
    output = kept.text()
    endings: list[str] = [EDITOR_CUT.format(limit=limit)] if end.truncated else []
    status = ToolStatus.DONE
    if end.stopped is ToolStatus.TIMED_OUT:
        endings.append(TIMEOUT_LINE.format(seconds=f"{timeout:g}"))
        status = ToolStatus.TIMED_OUT
    elif end.stopped is ToolStatus.INTERRUPTED:
        endings.append(INTERRUPTED)
        status = ToolStatus.INTERRUPTED
    elif end.exit_code:
        endings.append(EXIT_LINE.format(code=end.exit_code))
        status = ToolStatus.FAILED
    elif end.signal:
        endings.append(SIGNAL_LINE.format(name=signal_name_words(end.signal)))
        status = ToolStatus.FAILED
    return ended_with(output, endings, status)


def said(error: Exception) -> str:
    """An editor's JSON-RPC error in one line: its message, and its details when it gave some."""
    data = getattr(error, "data", None)
    details = data.get("details") if isinstance(data, dict) else None
    text = str(error) or type(error).__name__
    return f"{text} ({details})" if details else text


def signal_name_words(name: str) -> str:
    """`SIGKILL` (or `9`), as an editor's terminal reports it, in bash's own words: `killed`."""
    try:
        number = int(name) if name.isdigit() else signal.Signals[name.upper()].value
    except (KeyError, ValueError):
        return name.lower()
    return signal_words(number)
