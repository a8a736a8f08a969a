"""What one call of the client comes back as: a typed answer, never an exception.

The client knows nothing of the agent that uses it: it says *what* happened (an answer, a
failure in words, an interruption) and the caller — the `lsp` tool — decides how each looks
in a turn (the interrupted string of SPEC §3, the failed status of a row).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Text:
    """The server answered: the text for the model, and the diff a rename wrote or would."""

    text: str
    diff: str | None = None


@dataclass(frozen=True)
class Failed:
    """The call could not be answered; `text` is the one line saying why (`[lsp: …]`)."""

    text: str


@dataclass(frozen=True)
class Interrupted:
    """The caller's cancel flag was raised while the call waited; nothing more to say."""


Answer = Text | Failed | Interrupted
