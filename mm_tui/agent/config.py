"""Configuration (SPEC §2): the typed object, its discovery, overrides and validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal


@dataclass(frozen=True)
class LspServerSpec:
    """One entry of `lsp.servers` (SPEC §6)."""

    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    initialization_options: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    root_markers: tuple[str, ...] = ()


@dataclass(frozen=True)
class Config:
    """Every key of SPEC §2, with its default. Built by `load_config`, never mutated."""

    base_url: str = "http://localhost:11434/v1"
    api_key: str = "none"
    model: str | None = None
    temperature: float | None = None
    context_window: int | None = None
    bash_tool: bool = True
    edit_tools: bool = True
    skills_dir: str = ".mm/skills"
    max_output: int = 10_000
    preview_lines: int = 12
    permissions: Literal["ask", "allow"] = "ask"
    yolo: bool = False
    max_turns: int = 40
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    #: None when the user's config has no `lsp` section: the built-in defaults apply (SPEC §6).
    lsp_servers: tuple[LspServerSpec, ...] | None = None
    source: Path | None = field(default=None, compare=False)
