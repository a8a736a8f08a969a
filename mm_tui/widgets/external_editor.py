"""Ctrl+G: the prompt's text in `$VISUAL` / `$EDITOR`, and the edited text back.

A long message is easier to write in one's own editor. The window is suspended while the
editor owns the terminal (where the terminal cannot be handed over, as in tests, the editor
simply runs). An editor that fails or is missing changes nothing and says why.
"""

from __future__ import annotations

import logging
import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from textual.app import App, SuspendNotSupported

log = logging.getLogger(__name__)

FALLBACK_EDITOR = "vi"
EDITOR_FAILED = "the editor {editor!r} failed: {error} — the prompt is unchanged"


def editor_command(env: Mapping[str, str]) -> list[str]:
    """`$VISUAL`, else `$EDITOR`, else vi; split as a shell would (`code --wait`)."""
    chosen = env.get("VISUAL") or env.get("EDITOR") or FALLBACK_EDITOR
    return shlex.split(chosen)


def edit_in_editor(app: App[object], text: str) -> tuple[str | None, str]:
    """(the edited text or None, an error line or ""); the text travels in a temp file."""
    command = editor_command(os.environ)
    handle, name = tempfile.mkstemp(prefix="mm-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            with app.suspend():
                done = subprocess.run([*command, str(path)], check=False)
        except SuspendNotSupported:
            done = subprocess.run([*command, str(path)], check=False, capture_output=True)
        if done.returncode != 0:
            error = f"exit status {done.returncode}"
            return None, EDITOR_FAILED.format(editor=" ".join(command), error=error)
        return path.read_text(encoding="utf-8").rstrip("\n"), ""
    except OSError as exc:
        log.debug("editor %s failed", command, exc_info=True)
        return None, EDITOR_FAILED.format(editor=" ".join(command), error=exc.strerror or exc)
    finally:
        path.unlink(missing_ok=True)
