"""An editor that offers ACP's file system and terminals, as Zed does: it holds buffers (text
that may differ from the disk, unsaved), keeps what it is asked to write in them, and runs
terminal commands in real processes of its own, with its own environment."""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from typing import Any

from acp import RequestError
from acp.schema import (
    ClientCapabilities,
    CreateTerminalResponse,
    EnvVariable,
    FileSystemCapabilities,
    KillTerminalResponse,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

from tests.acp.client import RecordingClient

FS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True, write_text_file=True))
TERMINAL = ClientCapabilities(terminal=True)
BOTH = ClientCapabilities(
    fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
)


@dataclass
class _Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    killed: bool = False


@dataclass
class EditorClient(RecordingClient):
    """`buffers`: path -> the editor's text (read first; every write lands here, the disk is
    the editor's business). `calls`: every fs/terminal method asked, in order, with params.
    `environment`: what the editor's own terminals inherit (its secrets included)."""

    buffers: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    environment: dict[str, str] = field(default_factory=dict)
    terminals: dict[str, _Terminal] = field(default_factory=dict)
    refuse_reads: bool = False

    def methods(self) -> list[str]:
        return [name for name, _ in self.calls]

    async def read_text_file(
        self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        self.calls.append(("fs/read_text_file", {"path": path}))
        if self.refuse_reads:
            raise RequestError.internal_error({"details": "the buffer is being reloaded"})
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            with open(path, encoding="utf-8") as file:
                return ReadTextFileResponse(content=file.read())
        except OSError as error:
            raise RequestError.resource_not_found(path) from error

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.calls.append(("fs/write_text_file", {"path": path, "content": content}))
        self.buffers[path] = content
        return WriteTextFileResponse()

    async def create_terminal(
        self, session_id: str, command: str, args: list[str] | None = None,
        env: list[EnvVariable] | None = None, cwd: str | None = None,
        output_byte_limit: int | None = None, **kwargs: Any,
    ) -> CreateTerminalResponse:  # fmt: skip
        params = {"command": command, "args": args or [], "cwd": cwd, "limit": output_byte_limit}
        self.calls.append(("terminal/create", params))
        environment = {**os.environ, **self.environment}
        environment.update({v.name: v.value for v in env or []})
        process = await asyncio.create_subprocess_exec(
            command, *(args or []), cwd=cwd, env=environment, stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        terminal = _Terminal(process)
        terminal.reader = asyncio.ensure_future(self._read(terminal))
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def _read(self, terminal: _Terminal) -> None:
        assert terminal.process.stdout is not None
        while chunk := await terminal.process.stdout.read(65536):
            terminal.output += chunk

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        self.calls.append(("terminal/output", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        status = None if code is None else _exit_status(code)
        text = terminal.output.decode("utf-8", errors="replace")
        return TerminalOutputResponse(output=text, truncated=False, exit_status=status)

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        self.calls.append(("terminal/wait_for_exit", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        if terminal.reader is not None:
            await asyncio.wait({terminal.reader}, timeout=5)
        status = _exit_status(code)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        self.calls.append(("terminal/kill", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        terminal.killed = True
        if terminal.process.returncode is None:
            terminal.process.kill()
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        self.calls.append(("terminal/release", {"terminalId": terminal_id}))
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is None:
            terminal.process.kill()
            await terminal.process.wait()
        return ReleaseTerminalResponse()


def _exit_status(code: int) -> TerminalExitStatus:
    if code < 0:
        import signal

        return TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name)
    return TerminalExitStatus(exit_code=code, signal=None)
