"""The tools declared to the model for one session, built from the configuration."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mm_tui.agent.config import Config
from mm_tui.agent.tools.base import CommandRunner, EditorFiles, Tool
from mm_tui.support.secret_env import register_secrets

log = logging.getLogger(__name__)


def normalise_tool_name(name: str) -> str:
    """`Read-File`, `readFile` and ` read_file ` all become `readfile` for lenient lookup."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


@dataclass
class ToolRegistry:
    """Holds the session's tools by name; finds a tool even when the model misspells its case."""

    tools: dict[str, Tool] = field(default_factory=dict)
    #: Lines for the start banner (a language server missing, no skills...).
    notices: list[str] = field(default_factory=list)
    #: What a front lends the tools (an ACP editor's files and terminals); None: their own.
    files: EditorFiles | None = None
    commands: CommandRunner | None = None

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> ToolRegistry:
        return cls({tool.name: tool for tool in tools})

    def schemas(self) -> list[dict[str, Any]]:
        return [tool.schema() for tool in self.tools.values()]

    def names(self) -> list[str]:
        return list(self.tools)

    def get(self, name: str) -> Tool | None:
        return self.tools.get(name)

    def resolve(self, name: str) -> Tool | None:
        """The tool for `name`, tolerating case and separators (`Bash`, `read-file`)."""
        if name in self.tools:
            return self.tools[name]
        wanted = normalise_tool_name(name)
        return next((t for n, t in self.tools.items() if normalise_tool_name(n) == wanted), None)

    def closest(self, name: str) -> str | None:
        match = difflib.get_close_matches(name, list(self.tools), n=1, cutoff=0.4)
        return match[0] if match else None

    def close(self) -> None:
        """Stop what tools keep running across calls (language servers)."""
        for tool in self.tools.values():
            closer = getattr(tool, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:  # closing must never keep mm-tui from exiting
                    log.debug("closing the %s tool failed", tool.name, exc_info=True)


def build_registry(config: Config, cwd: Path) -> ToolRegistry:
    """The built-in tools the configuration declares (SPEC §4)."""
    tools: list[Tool] = []
    notices: list[str] = []
    if config.bash_tool:
        from mm_tui.agent.tools.bash import BashTool

        tools.append(
            BashTool(
                config.bash_timeout,
                config.max_processes,
                config.bash_timeout_max,
                fence_terminals=config.fence_terminals,
            )
        )
    if config.edit_tools:
        from mm_tui.agent.tools.edit_file import EditFileTool
        from mm_tui.agent.tools.read_file import ReadFileTool
        from mm_tui.agent.tools.write_file import WriteFileTool

        tools += [ReadFileTool(), WriteFileTool(), EditFileTool()]
        _clean_leftovers_later(cwd)
    from mm_tui.agent.tools.read_skill import ReadSkillTool

    skills_dir = Path(config.skills_dir).expanduser()
    skill_tool = ReadSkillTool.discover(
        skills_dir if skills_dir.is_absolute() else cwd / skills_dir
    )
    if skill_tool is not None:
        tools.append(skill_tool)
    lsp_tool, warnings = _build_lsp(config, cwd)
    notices += warnings
    if lsp_tool is not None:
        tools.append(lsp_tool)
    if config.untrusted and config.source is not None:
        from mm_tui.agent.trust import notice

        notices.insert(0, notice(config.source, config.untrusted))
    register_secrets(config.scrub_env, [config.api_key])
    registry = ToolRegistry.of(tools)
    registry.notices = notices
    return registry


def _clean_leftovers_later(cwd: Path) -> None:
    """Remove temporaries a killed write left in the project, off the start-up path."""
    import threading

    from mm_tui.agent.tools.safe_files import remove_leftover_temporaries

    def clean() -> None:
        try:
            for path in remove_leftover_temporaries(cwd):
                log.info("removed the leftover of a killed write: %s", path)
        except Exception:  # a cleanup must never disturb a session
            log.debug("cleaning leftovers under %s failed", cwd, exc_info=True)

    threading.Thread(target=clean, name="mm-leftovers", daemon=True).start()


def _build_lsp(config: Config, cwd: Path) -> tuple[Tool | None, list[str]]:
    try:
        from mm_tui.agent.tools.lsp import LspTool
        from mm_tui.lsp.defaults import default_servers
    except ImportError:  # the lsp tool is optional; its absence is said, not hidden
        return None, ["[warning: the lsp tool is unavailable in this installation]"]
    configured = config.lsp_servers
    user_configured = configured is not None
    specs = configured if configured is not None else default_servers()
    tool, warnings = LspTool.create(specs, cwd, user_configured=user_configured)
    if tool is None and specs:  # SPEC §4: the start banner says the tool is off
        which = "configured" if user_configured else "known"
        names = ", ".join(spec.name for spec in specs)
        warnings.append(
            f"[warning: no {which} language server ({names}) was found on the PATH — "
            "the lsp tool is off]"
        )
    return tool, list(warnings)
