"""A scripted OpenAI-compatible model server for tests, benchmarks and demos.

(Fault table filled in after verification.)
"""

from __future__ import annotations

from mm_tui.scripted_server.script import (
    DIALECTS,
    FAULTS,
    Reply,
    ScriptError,
    ToolCall,
    load_script,
)
from mm_tui.scripted_server.server import SCRIPT_EXHAUSTED_TEXT, ScriptedServer

__all__ = [
    "DIALECTS",
    "FAULTS",
    "SCRIPT_EXHAUSTED_TEXT",
    "Reply",
    "ScriptError",
    "ScriptedServer",
    "ToolCall",
    "load_script",
]
