"""The prompt's history, kept across runs in one JSON-lines file (multi-line entries survive).

The file is private (0600: prompts hold what you asked, sometimes pasted secrets) and bounded:
the last HISTORY_LIMIT entries are kept; the file is rewritten to them once it holds a tenth
more, so an append stays an append almost always.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

from mm_tui.support.paths import data_dir

log = logging.getLogger(__name__)

HISTORY_LIMIT = 1000
HISTORY_SLACK = HISTORY_LIMIT // 10
HISTORY_MODE = 0o600


def default_history_path() -> Path:
    """`$XDG_DATA_HOME/mm/prompt_history.jsonl`, beside the sessions (SPEC §8)."""
    return data_dir() / "prompt_history.jsonl"


class PromptHistory:
    """Entries oldest first, and a cursor that Up and Down walk; the draft is kept aside."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._file_lines = 0
        self.entries: list[str] = self._load()
        self._cursor = len(self.entries)
        self._draft = ""

    def _load(self) -> list[str]:
        if self.path is None or not self.path.exists():
            return []
        entries: list[str] = []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
            self._file_lines = len(lines)
            for line in lines:
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if isinstance(entry, str) and entry:
                    entries.append(entry)
        except OSError:
            log.debug("cannot read the prompt history %s", self.path, exc_info=True)
            return []
        return entries[-HISTORY_LIMIT:]

    def add(self, text: str) -> None:
        """Remember a sent message (not twice in a row) and append it to the file."""
        self._cursor = len(self.entries)
        self._draft = ""
        if not text.strip() or (self.entries and self.entries[-1] == text):
            self._cursor = len(self.entries)
            return
        self.entries.append(text)
        del self.entries[:-HISTORY_LIMIT]
        self._cursor = len(self.entries)
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            descriptor = os.open(self.path, flags, HISTORY_MODE)
            with os.fdopen(descriptor, "a", encoding="utf-8") as file:
                os.fchmod(descriptor, HISTORY_MODE)  # an older, wider file is narrowed too
                file.write(json.dumps(text) + "\n")
            self._file_lines += 1
            if self._file_lines > HISTORY_LIMIT + HISTORY_SLACK:
                self._rewrite()
        except OSError:  # a read-only home must not stop the conversation
            log.debug("cannot append to the prompt history %s", self.path, exc_info=True)

    def _rewrite(self) -> None:
        """The file cut to the kept entries, atomically (a reader sees the old or the new)."""
        if self.path is None:
            return
        from mm_tui.support.atomic_write import write_atomically  # only when the file is cut

        body = "".join(json.dumps(entry) + "\n" for entry in self.entries)
        write_atomically(self.path, body.encode("utf-8"), new_file_mode=HISTORY_MODE)
        self._file_lines = len(self.entries)

    def previous(self, current: str) -> str | None:
        """The entry before the cursor, or None at the oldest; saves the draft on first step."""
        if self._cursor == 0:
            return None
        if self._cursor == len(self.entries):
            self._draft = current
        self._cursor -= 1
        return self.entries[self._cursor]

    def next(self) -> str | None:
        """The entry after the cursor, the saved draft past the newest, None when there."""
        if self._cursor >= len(self.entries):
            return None
        self._cursor += 1
        if self._cursor == len(self.entries):
            return self._draft
        return self.entries[self._cursor]
