"""The built-in system prompt: short, concrete, written for a 12B model."""

from __future__ import annotations

from pathlib import Path

from mm_tui.agent.config import Config
from mm_tui.agent.project_instructions import load_project_instructions, with_project_instructions

BUILTIN_SYSTEM_PROMPT = """\
You are mm, a coding agent working in the directory {cwd}.
You help by reading, running and changing the code in this directory with your tools.

How to work:
- Look before you act: read a file before you edit it; run a command to check a fact.
- Call one tool at a time when each step depends on the previous one.
- Change files with edit_file (one edit per place) or write_file (a whole new file).
- After a change, check it: run the tests or the program, or ask lsp for diagnostics.
- When a tool reports an error, read it and change your approach; do not repeat the same call.
- Answer in short Markdown. Say what you did and what you found.
"""


def system_prompt(config: Config, cwd: Path) -> str:
    """The base prompt, then the project's AGENTS.md (read again for each new session)."""
    return with_project_instructions(_base_prompt(config, cwd), load_project_instructions(cwd))


def _base_prompt(config: Config, cwd: Path) -> str:
    """The prompt from the config (text or file), else the built-in one."""
    if config.system_prompt:
        return config.system_prompt
    if config.system_prompt_file:
        path = Path(config.system_prompt_file).expanduser()
        if not path.is_absolute():
            path = cwd / path
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            pass  # the Agent reports it as a start-up notice
    return BUILTIN_SYSTEM_PROMPT.format(cwd=cwd)
