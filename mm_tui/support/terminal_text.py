"""Make text from the model, files and commands safe to show literally.

Terminal escape sequences and control characters would be written raw to the terminal and
break the layout; they are removed. A carriage return keeps what a terminal would show (the
text after the last one on its line), so progress bars do not pile up.
"""

from __future__ import annotations

import re

# CSI (colours, cursor moves), OSC (titles, hyperlinks), and two-character escapes.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, ended by BEL or ST
    r"|\x1b[@-Z\\-_]"  # two-character escapes
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
)
# C0 controls except tab and newline, DEL, and C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def literal(text: str) -> str:
    """`text` without escape sequences or control characters; tabs and newlines kept."""
    if "\x1b" in text or "\x9b" in text:
        text = _ESCAPE_SEQUENCE.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n")
        text = "\n".join(_after_carriage_return(line) for line in text.split("\n"))
    return _CONTROL.sub("", text)


def _after_carriage_return(line: str) -> str:
    """What a terminal shows for a line rewritten with carriage returns."""
    if "\r" not in line:
        return line
    parts = [part for part in line.split("\r") if part]
    return parts[-1] if parts else ""


def first_line(text: str) -> str:
    """The first line of `text`, marked with `…` when more lines follow (row titles)."""
    head, newline, rest = literal(text).partition("\n")
    return f"{head} …" if newline and rest.strip() else head
