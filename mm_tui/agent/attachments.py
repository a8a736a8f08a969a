"""Files mentioned with `@path` in a message: their content goes to the model with the text.

Bounded per file and per message, so a mention of a log cannot fill a 4k context; each
attachment is described in one line the window shows under the message ("said in the row").
The model sees the person's text unchanged, then one `<file path="…">` block per file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

MAX_FILE_CHARS = 20_000
MAX_TOTAL_CHARS = 40_000
#: `@src/a.py`: a mention starts a word and runs to the next space.
MENTION = re.compile(r"(?:(?<=\s)|^)@([^\s@]+)")


@dataclass(frozen=True)
class Attachment:
    """One mentioned file: what the model gets, and the line the person reads."""

    path: str
    content: str
    note: str  # "📎 src/a.py (1.2k characters)", "📎 big.log (cut at 20,000 of 93,112 characters)"


@dataclass(frozen=True)
class Attached:
    """A message with its mentioned files: `for_model` is what the turn sends."""

    text: str
    attachments: tuple[Attachment, ...]

    @property
    def for_model(self) -> str:
        blocks = [
            f'<file path="{a.path}">\n{a.content}\n</file>' for a in self.attachments if a.content
        ]
        if not blocks:
            return self.text
        return "\n\n".join([self.text, *blocks])

    @property
    def notes(self) -> list[str]:
        return [a.note for a in self.attachments]


def mentioned_paths(text: str) -> list[str]:
    """The `@path` mentions of a message, in order, each once."""
    seen: dict[str, None] = {}
    for match in MENTION.finditer(text):
        seen.setdefault(match.group(1).rstrip(".,;:!?)"), None)
    return list(seen)


def attach_mentions(
    text: str,
    root: Path,
    *,
    max_file_chars: int = MAX_FILE_CHARS,
    max_total_chars: int = MAX_TOTAL_CHARS,
) -> Attached:
    """Read each mentioned file inside `root`; a mention that is not a readable file is left
    as plain text (an email address, a decorator), never an error."""
    attachments: list[Attachment] = []
    budget = max_total_chars
    resolved_root = root.resolve()
    for mention in mentioned_paths(text):
        path = (root / mention).resolve()
        if not path.is_relative_to(resolved_root) or not path.is_file():
            continue
        try:
            raw = path.read_bytes()
        except OSError as exc:
            attachments.append(
                Attachment(mention, "", f"📎 {mention} not attached: {exc.strerror or exc}")
            )
            continue
        if b"\0" in raw[:8192]:
            attachments.append(Attachment(mention, "", f"📎 {mention} not attached: binary file"))
            continue
        content = raw.decode("utf-8", errors="replace") or "[empty file]"
        limit = min(max_file_chars, budget)
        if limit <= 0:
            note = f"📎 {mention} not attached: the message already carries {max_total_chars:,} characters of files"
            attachments.append(Attachment(mention, "", note))
            continue
        if len(content) > limit:
            note = f"📎 {mention} (cut at {limit:,} of {len(content):,} characters)"
            content = content[:limit] + f"\n[… cut: {len(content) - limit:,} more characters]"
        else:
            note = f"📎 {mention} ({_size(len(content))})"
        budget -= min(len(content), limit)
        attachments.append(Attachment(mention, content, note))
    return Attached(text, tuple(attachments))


def _size(chars: int) -> str:
    if chars < 1000:
        return f"{chars} characters"
    return f"{chars / 1000:.1f}k characters"
