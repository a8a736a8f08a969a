"""`AGENTS.md` at the project root: the instructions Codex, OpenCode, Crush and Gemini CLI share.

Added to the system prompt, bounded so a long file cannot eat a small model's context, and
said once at start (`using AGENTS.md (1.2k tokens)`). The file belongs to the project, like a
project config, and follows its trust rule (`agent/trust.py`): it may only change what the
model is told, which an untrusted project may not, so a file the person has not trusted (with
this content) is announced but not used.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from mm_tui.agent.context import CHARS_PER_TOKEN

log = logging.getLogger(__name__)

AGENTS_FILE = "AGENTS.md"
MAX_CHARS = 16_000  # about 4k tokens: a quarter of a small model's usual window at most
USING = "using AGENTS.md ({tokens} tokens)"
USING_CUT = "using AGENTS.md ({tokens} tokens, cut from {total} — keep it shorter)"
NOT_TRUSTED = (
    "AGENTS.md not used: this directory is not trusted with it (run `mm-tui trust` in {folder})"
)
UNREADABLE = "AGENTS.md not used: {error}"
HEADER = "Instructions from the project's AGENTS.md (follow them):"

#: `/init`: what the model is asked to do (it writes the file with its own tools).
INIT_PROMPT = """\
Write a starter AGENTS.md at the root of this project for coding agents like you.
First look around: list the files, read the README and the build or package files.
Then write AGENTS.md with write_file, short (under 60 lines), with these sections:
- Project: what it is, in two sentences.
- Layout: the main folders and what lives in each.
- Commands: how to install, build, run the tests and the linter (exact commands).
- Conventions: code style and rules you found (naming, formatting, tests).
Only write what you checked in the files; do not invent commands.
If AGENTS.md already exists, read it and improve it instead of replacing what is right."""


@dataclass(frozen=True)
class ProjectInstructions:
    """What goes into the system prompt (empty when nothing does) and the line said at start."""

    text: str
    note: str
    level: Literal["info", "warning"] = "info"


def approximate_tokens(chars: int) -> str:
    """`850`, `1.2k`: how the start line counts tokens (an estimate, 4 characters each)."""
    tokens = max(1, round(chars / CHARS_PER_TOKEN)) if chars else 0
    return str(tokens) if tokens < 1000 else f"{tokens / 1000:.1f}k"


def load_project_instructions(
    root: Path,
    *,
    max_chars: int = MAX_CHARS,
    trusted: Callable[[Path, bytes], bool] | None = None,
) -> ProjectInstructions | None:
    """None when the project has no AGENTS.md; else its bounded text and the note to say.
    `trusted(path, content)`: by default, whether the person trusted it (`agent/trust.py`)."""
    path = root / AGENTS_FILE
    if not path.is_file():
        return None
    try:
        data = path.read_bytes()  # read once: what is checked is what is used
    except OSError as exc:
        log.debug("cannot read %s", path, exc_info=True)
        return ProjectInstructions("", UNREADABLE.format(error=exc.strerror or exc), "warning")
    if trusted is None:
        from mm_tui.agent.trust import is_trusted

        trusted = is_trusted
    if not trusted(path, data):
        return ProjectInstructions("", NOT_TRUSTED.format(folder=root), "warning")
    text = data.decode("utf-8", errors="replace").strip()
    if not text:
        return None
    if len(text) > max_chars:
        total = approximate_tokens(len(text))
        text = text[:max_chars]
        note = USING_CUT.format(tokens=approximate_tokens(len(text)), total=total)
        return ProjectInstructions(text, note, "warning")
    return ProjectInstructions(text, USING.format(tokens=approximate_tokens(len(text))))


def with_project_instructions(prompt: str, instructions: ProjectInstructions | None) -> str:
    """The system prompt with the project's instructions after it (when there are any)."""
    if instructions is None or not instructions.text:
        return prompt
    return f"{prompt.rstrip()}\n\n{HEADER}\n\n{instructions.text}\n"
