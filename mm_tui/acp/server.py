"""The ACP agent: answers initialize, session/new, session/load, session/prompt and
session/cancel for any number of sessions, each with its own core Agent and working directory.

A session's configuration is looked up from its `cwd` (the project's `.mm.yaml`), with the
command line's flags on top. Turns end as ACP stop reasons; a turn that ends in an error (the
model server down, a refused key) answers the prompt with a JSON-RPC error carrying its line.
mm-tui's own lines (warnings, loop verdicts) are notices, never the assistant's text; the
turn's summary travels in the prompt answer's `_meta`. When the client offers its file system
(both `fs` methods) or its terminals, the tools use them (docs/decisions/0010-acp-client-fs-and-
terminal.md), unless `--no-client-fs` / `--no-client-terminal` say otherwise.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast
from urllib.parse import unquote, urlparse

from acp import (
    PROTOCOL_VERSION,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptResponse,
    RequestError,
    run_agent,
)
from acp.interfaces import Agent as AcpAgent
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AudioContentBlock,
    ClientCapabilities,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    Implementation,
    PromptCapabilities,
    ResourceContentBlock,
    StopReason,
    TextContentBlock,
    TextResourceContents,
)

from mm_tui import __version__
from mm_tui.acp.client_files import ClientFiles
from mm_tui.acp.client_terminals import ClientTerminals
from mm_tui.acp.file_changes import read_text
from mm_tui.acp.session import AcpSession, SessionBridge
from mm_tui.acp.updates import EventTranslator
from mm_tui.agent.config import Config, ConfigError
from mm_tui.agent.events import Notice, ToolKind, TurnEnded, TurnSummary
from mm_tui.agent.session import SessionStore
from mm_tui.agent.tools.registry import ToolRegistry, build_registry

log = logging.getLogger(__name__)

ConfigLoader = Callable[[Path], Config]
PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
#: The JSON-RPC error of a prompt whose turn failed (the model server down, a bad key): an
#: internal error, its message the one line the window shows.
TURN_FAILED = -32603
STOP_REASONS: dict[str, StopReason] = {
    "answered": "end_turn",
    "error": "end_turn",  # answered as a JSON-RPC error instead
    "loop": "end_turn",  # the verdict was said as a notice
    "max_turns": "max_turn_requests",
    "interrupted": "cancelled",
}


class MmAcpAgent:
    """mm-tui's side of the protocol (the SDK's `acp.Agent` shape)."""

    def __init__(
        self, load_config: ConfigLoader, *, client_fs: bool = True, client_terminal: bool = True
    ) -> None:
        self.load_config = load_config
        self.sessions: dict[str, AcpSession] = {}
        self._client: Client | None = None
        #: What the client offered at `initialize`, as far as mm-tui is allowed to use it.
        self.client_fs = False
        self.client_terminal = False
        self._allow_fs, self._allow_terminal = client_fs, client_terminal

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        offered = client_capabilities or ClientCapabilities()
        fs = offered.fs
        both = fs is not None and bool(fs.read_text_file) and bool(fs.write_text_file)
        self.client_fs = self._allow_fs and both  # one without the other mixes two versions
        self.client_terminal = self._allow_terminal and bool(offered.terminal)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="mm-tui", title="mm-tui", version=__version__),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        session = await self._open(cwd)
        _say_mcp_unsupported(session, mcp_servers)
        return NewSessionResponse(session_id=session.session_id)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        """Resume a session file and send its conversation back as updates, then answer."""
        path = SessionStore().locate(session_id)
        if not path.is_file():
            raise RequestError.resource_not_found(session_id)
        old = self.sessions.pop(session_id, None)
        if old is not None:
            await old.close()
        session = await self._open(cwd, resume=session_id)
        _say_mcp_unsupported(session, mcp_servers)
        await _replay(path, session.bridge)
        return LoadSessionResponse()

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        ended: TurnEnded = await session.prompt(prompt_text(prompt, session.bridge.translator.cwd))
        summary, failure = session.bridge.translator.take_turn_end()
        if failure is not None:  # the history stays valid: the next prompt goes on from it
            raise RequestError(TURN_FAILED, failure, {"details": failure, "reason": ended.reason})
        meta = {"mm-tui": {"summary": _summary(summary)}} if summary is not None else None
        return PromptResponse(stop_reason=STOP_REASONS[ended.reason], field_meta=meta)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            session.cancel()

    async def close_all(self) -> None:
        for session in list(self.sessions.values()):
            await session.close()
        self.sessions.clear()

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": f"no session {session_id}"})
        return session

    async def _open(self, cwd: str, resume: str | None = None) -> AcpSession:
        from mm_tui.agent.agent import Agent

        directory = Path(cwd)
        if not directory.is_absolute() or not directory.is_dir():
            raise RequestError.invalid_params({"cwd": f"not an absolute directory: {cwd}"})
        try:
            config = await asyncio.to_thread(self.load_config, directory)
        except ConfigError as exc:
            raise RequestError(-32603, f"mm-tui: {exc}") from None
        assert self._client is not None, "on_connect comes first"
        bridge = SessionBridge(self._client, EventTranslator(directory, config.skills_dir))
        registry = await asyncio.to_thread(build_registry, config, directory.resolve())
        self._lend(registry, bridge, directory.resolve())
        agent = await asyncio.to_thread(
            Agent, config, bridge.sink, directory, resume=resume, registry=registry
        )
        session = AcpSession(agent, bridge, resume or "")
        self.sessions[session.session_id] = session
        return session

    def _lend(self, registry: ToolRegistry, bridge: SessionBridge, root: Path) -> None:
        """The client's files and terminals, to the tools, as far as offered and allowed."""
        if self.client_fs:
            files = ClientFiles(bridge, root)
            registry.files = files
            translator = bridge.translator

            def current(path: Path) -> str | None:
                known = files.known_text(path)
                return known if known is not None else read_text(path)

            translator.read_current = current
        if self.client_terminal:
            registry.commands = ClientTerminals(bridge, root)


def _summary(summary: TurnSummary) -> dict[str, Any]:
    """The turn's counters as data, and the window's line for a client that shows text."""
    return {
        "line": summary.line(),
        "counters": {kind.value: summary.count(kind) for kind in ToolKind},
        "duration": round(summary.duration, 3),
        "promptTokens": summary.prompt_tokens,
        "completionTokens": summary.completion_tokens,
    }


MCP_UNSUPPORTED = (
    "mm-tui does not use MCP servers: the {count} given by the editor ({names}) are not "
    "started, and their tools are not offered to the model"
)


def _say_mcp_unsupported(session: AcpSession, servers: list[Any] | None) -> None:
    """MCP servers the client passed are not silently dropped: said before the first turn."""
    if not servers:
        return
    names = ", ".join(str(getattr(server, "name", "") or "?") for server in servers)
    text = MCP_UNSUPPORTED.format(count=len(servers), names=names)
    session.agent.startup_notices.append(Notice("warning", text))


def prompt_text(blocks: list[PromptBlock], cwd: Path) -> str:
    """The user's message: text as typed, a linked file as `@path`, an attached file's text
    in a fence under its path. Images and audio are not for mm-tui's models."""
    parts: list[str] = []
    for block in blocks:
        if isinstance(block, TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            parts.append(f"@{_shown_path(block.uri, cwd)}")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                path = _shown_path(resource.uri, cwd)
                parts.append(f"\n{path}:\n```\n{resource.text}\n```\n")
    return " ".join(part for part in parts if part).strip()


def _shown_path(uri: str, cwd: Path) -> str:
    """A file URI as a path relative to the project when it is inside it."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return uri
    path = Path(unquote(parsed.path))
    try:
        return str(path.relative_to(cwd))
    except ValueError:
        return str(path)


async def _replay(path: Path, bridge: SessionBridge) -> None:
    """The saved conversation, as the window's replay reads it, sent as updates."""
    from mm_tui.agent.session import read_session_document
    from mm_tui.replay import conversation_events

    translator = EventTranslator(bridge.translator.cwd, bridge.translator.skills_dir, True)
    session = await asyncio.to_thread(read_session_document, path)
    live, bridge.translator = bridge.translator, translator
    try:
        for event in conversation_events(session):  # the conversation, not the window's end line
            bridge.sink(event)
        await bridge.flush()
    finally:
        bridge.translator = live


async def serve_stdio(
    load_config: ConfigLoader, *, client_fs: bool = True, client_terminal: bool = True
) -> int:
    """Speak ACP on stdin/stdout until the client closes them."""
    agent = MmAcpAgent(load_config, client_fs=client_fs, client_terminal=client_terminal)
    try:
        # Duck-typed on purpose: the SDK routes the methods an agent has and answers "method not
        # found" for the others; subclassing its Protocol would answer them with None instead.
        await run_agent(cast(AcpAgent, cast(object, agent)))
    finally:
        await agent.close_all()
    return 0
