"""The editor's side, from the ACP SDK itself: spawn `mm-tui acp` on a real stdio pipe and
record everything it sends."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.core import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    AllowedOutcome,
    ClientCapabilities,
    ContentToolCallContent,
    DeniedOutcome,
    FileEditToolCallContent,
    Implementation,
    PermissionOption,
    RequestPermissionResponse,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UserMessageChunk,
)

from tests.faces.helpers import clean_env


@dataclass
class RecordingClient:
    """Answers permission questions with `answer` (an option id; a list: one per question, in
    order), or, when None, waits until `release` is set and answers `cancelled`, as the
    protocol asks of a client on cancel."""

    answer: str | list[str] | None = "allow_once"
    updates: list[Any] = field(default_factory=list)
    questions: list[tuple[ToolCallUpdate, list[PermissionOption]]] = field(default_factory=list)
    asked: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)
    session_ids: list[str] = field(default_factory=list)
    #: Each turn's summary, from the prompt answer's `_meta` (`one_turn`).
    summaries: list[Any] = field(default_factory=list)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:  # fmt: skip
        self.questions.append((tool_call, options))
        self.asked.set()
        if self.answer is None:
            await self.release.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        answer = self.answer.pop(0) if isinstance(self.answer, list) else self.answer
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def write_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, *args: Any, **kwargs: Any) -> Any:
        raise RequestError.method_not_found("fs/read_text_file")

    # -- what the tests read ---------------------------------------------------------------

    def message_text(self) -> str:
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, AgentMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def thought_text(self) -> str:
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, AgentThoughtChunk) and isinstance(u.content, TextContentBlock)
        )

    def user_text(self) -> str:
        return "".join(
            u.content.text
            for u in self.updates
            if isinstance(u, UserMessageChunk) and isinstance(u.content, TextContentBlock)
        )

    def starts(self) -> list[ToolCallStart]:
        """The model's tool calls (mm-tui's notices, sent as finished calls, left out)."""
        return [u for u in self.updates if isinstance(u, ToolCallStart) and not _notice_of(u)]

    def notices(self) -> list[tuple[str, str]]:
        """mm-tui's own lines, as (level, text): the calls whose `_meta` says `notice`."""
        return [
            (_notice_of(u), "".join(texts(u.content)))
            for u in self.updates
            if isinstance(u, ToolCallStart) and _notice_of(u)
        ]

    def progress(self, tool_call_id: str) -> list[ToolCallProgress]:
        return [
            u
            for u in self.updates
            if isinstance(u, ToolCallProgress) and u.tool_call_id == tool_call_id
        ]

    def final(self, tool_call_id: str) -> ToolCallProgress:
        return [u for u in self.progress(tool_call_id) if u.status in ("completed", "failed")][-1]


def _notice_of(update: ToolCallStart) -> str:
    meta = (update.field_meta or {}).get("mm-tui") or {}
    return str(meta.get("notice") or "")


def texts(content: list[Any] | None) -> list[str]:
    return [
        c.content.text
        for c in content or []
        if isinstance(c, ContentToolCallContent) and isinstance(c.content, TextContentBlock)
    ]


def diffs(content: list[Any] | None) -> list[FileEditToolCallContent]:
    return [c for c in content or [] if isinstance(c, FileEditToolCallContent)]


@asynccontextmanager
async def mm_acp(
    client: RecordingClient,
    home: Path,
    *flags: str,
    cwd: Path | None = None,
    capabilities: ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
) -> AsyncIterator[ClientSideConnection]:
    """`mm-tui acp FLAGS` as a subprocess, initialized; its stderr goes to home/acp.err."""
    env = clean_env(home, **(env or {}))
    with (home / "acp.err").open("ab") as err:
        async with spawn_agent_process(
            cast(Client, cast(object, client)),
            sys.executable, "-m", "mm_tui.cli", "acp", *flags,
            env=env, cwd=cwd or home, transport_kwargs={"stderr": err.fileno(), "shutdown_timeout": 20.0},
        ) as (conn, _process):  # fmt: skip
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities or ClientCapabilities(),
                client_info=Implementation(name="test-client", version="0"),
            )
            yield conn


async def prompt(conn: ClientSideConnection, session_id: str, text: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[text_block(text)])
    return response.stop_reason


def one_turn(
    client: RecordingClient,
    home: Path,
    base_url: str,
    text: str,
    *flags: str,
    cwd: Path | None = None,
    capabilities: ClientCapabilities | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """A new session in `cwd` (default: home) on the scripted model at `base_url`, one prompt
    with `text`, run to its end: the turn's stop reason (all the tests of a single turn)."""

    async def scenario() -> str:
        async with mm_acp(
            client, home, "--base-url", base_url, "--model", "m", *flags,
            cwd=None, capabilities=capabilities, env=env,
        ) as conn:  # fmt: skip
            session = await conn.new_session(cwd=str(cwd or home), mcp_servers=[])
            client.session_ids.append(session.session_id)
            response = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
            client.summaries.append(
                ((response.field_meta or {}).get("mm-tui") or {}).get("summary")
            )
            return response.stop_reason

    return asyncio.run(asyncio.wait_for(scenario(), timeout=115))
