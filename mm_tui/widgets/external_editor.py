"""Ctrl+G: the prompt's text in `$VISUAL` / `$EDITOR`, and the edited text back.

A long message is easier to write in one's own editor. The window is suspended while the
editor owns the terminal (where the terminal cannot be handed over, as in tests, the editor
simply runs). An editor that fails or is missing changes nothing and says why, and the window
always comes back: nothing raised while it is suspended leaves Textual's `suspend()` block.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
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


EDITOR_MISSING = (
    "the editor {editor!r} is not installed (set $VISUAL or $EDITOR) — the prompt is unchanged"
)


def edit_in_editor(app: App[object], text: str) -> tuple[str | None, str]:
    """(the edited text or None, an error line or ""); the text travels in a temp file."""
    command = editor_command(os.environ)
    if not command or shutil.which(command[0]) is None:  # found out before the window leaves
        return None, EDITOR_MISSING.format(editor=" ".join(command) or "(empty)")
    handle, name = tempfile.mkstemp(prefix="mm-prompt-", suffix=".md")
    path = Path(name)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        try:
            done = _run_suspended(app, [*command, str(path)])
        except SuspendNotSupported:
            done = subprocess.run([*command, str(path)], check=False, capture_output=True)
        if isinstance(done, BaseException):
            log.debug("editor %s failed while the window was suspended", command, exc_info=done)
            error = getattr(done, "strerror", None) or type(done).__name__
            return None, EDITOR_FAILED.format(editor=" ".join(command), error=error)
        if done.returncode != 0:
            error = f"exit status {done.returncode}"
            return None, EDITOR_FAILED.format(editor=" ".join(command), error=error)
        return path.read_text(encoding="utf-8").rstrip("\n"), ""
    except OSError as exc:
        log.debug("editor %s failed", command, exc_info=True)
        return None, EDITOR_FAILED.format(editor=" ".join(command), error=exc.strerror or exc)
    finally:
        path.unlink(missing_ok=True)


def _run_suspended(
    app: App[object], argv: list[str]
) -> subprocess.CompletedProcess[bytes] | BaseException:
    """Run `argv` with the terminal handed over. Whatever happens meanwhile (the editor cannot
    start, Ctrl+C reaches mm-tui too) is caught inside the block: an exception leaving
    Textual's `suspend()` skips its resume, and the window stays frozen with no key working."""
    with app.suspend():
        try:
            return subprocess.run(argv, check=False)
        except BaseException as exc:  # noqa: BLE001 - handed back, after the window resumed
            log.debug("the editor failed under suspend", exc_info=True)
            return exc
