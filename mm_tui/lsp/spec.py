"""How to start one language server: an entry of `lsp.servers` (SPEC §6).

It lives in the lsp package so the client is usable on its own; the config builds these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LspServerSpec:
    """One entry of `lsp.servers` (SPEC §6)."""

    name: str
    command: tuple[str, ...]
    extensions: tuple[str, ...]
    initialization_options: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None
    root_markers: tuple[str, ...] = ()
