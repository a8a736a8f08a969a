"""Bodies of tool rows: a command's output and a coloured diff, shown literally.

A diff is what a person approves: every character that could hide, move or reorder text in
it (a carriage return that makes `echo done` cover the line written before it, a filler, a
bidi override) is drawn as an escape in reverse (`support.terminal_text.visible_parts`);
indentation stays as it is, unless it is wide enough to push a line out of view.

A usual output is shown wrapped, `previewLines` high and scrollable. A huge one (10,000 lines,
a line of 100,000 characters) and live output go to a `Log`, which renders only the visible
lines; neither parses markup, so nothing a command prints can break the layout.
"""

from __future__ import annotations

import re

from rich.highlighter import Highlighter
from rich.text import Text
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Log, Static

from mm_tui.support.terminal_text import literal, visible_parts

# Up to this size an output is shown wrapped (readable); beyond, in a virtual Log.
WRAPPED_OUTPUT_MAX_LINES = 2_000
WRAPPED_OUTPUT_MAX_CHARS = 200_000
# Diff lines with line numbers in front (`  12 + text`), as edit_file may print them.
_NUMBERED_CHANGE = re.compile(r"^\s*\d+\s*([+-])")
#: A diff line's marker and indentation, kept as they are up to this many columns.
_INDENT = re.compile(r"^[ +\-]?[ \t]*")
INDENT_SHOWN = 40
ESCAPE_STYLE = "reverse"


class DiffHighlighter(Highlighter):
    """Colours a unified diff line by line: additions green, removals red, hunks cyan; the
    escapes of hiding characters (`escapes`: a shown line -> its escapes' spans) in reverse."""

    def __init__(self) -> None:
        self.escapes: dict[str, list[tuple[int, int]]] = {}

    def highlight(self, text: Text) -> None:
        line = text.plain
        for start, end in self.escapes.get(line, ()):
            text.stylize(ESCAPE_STYLE, start, end)
        if line.startswith(("+++", "---")):
            text.stylize("bold")
        elif line.startswith("@@"):
            text.stylize("cyan")
        elif line.startswith("+"):
            text.stylize("green")
        elif line.startswith("-"):
            text.stylize("red")
        elif match := _NUMBERED_CHANGE.match(line):
            text.stylize("green" if match.group(1) == "+" else "red")


class OutputLog(Log):
    """A command's output, `previewLines` high and scrollable."""

    DEFAULT_CSS = """
    OutputLog {
        height: auto;
        overflow: auto;
        background: $surface;
        scrollbar-size: 1 1;
    }
    """

    def __init__(self, text: str = "", *, height: int, classes: str | None = None) -> None:
        super().__init__(auto_scroll=False, classes=classes)
        self.styles.max_height = max(1, height) + 1  # + 1 for a horizontal scrollbar
        self._newline_owed = False  # a final newline is shown only when more text follows
        if text:
            self.show(text)

    def show(self, text: str) -> None:
        """Replace the whole content."""
        self.clear()
        self._newline_owed = False
        self.append(text)

    def append(self, text: str, *, follow: bool = False) -> None:
        """Add output at the end; `follow` keeps the end in view (live output)."""
        cleaned = literal(text)
        if not cleaned:
            return
        if self._newline_owed:
            cleaned = "\n" + cleaned
        self._newline_owed = cleaned.endswith("\n")
        if self._newline_owed:
            cleaned = cleaned[:-1]
        if cleaned:
            self.write(cleaned, scroll_end=follow)


class DiffLog(OutputLog):
    """An edit's diff, coloured by `DiffHighlighter`."""

    def __init__(self, diff: str, *, height: int) -> None:
        super().__init__(height=height, classes="diff")
        self.highlight = True
        self.highlighter = self.diff_highlighter = DiffHighlighter()
        self.show(diff)

    def show(self, text: str) -> None:
        """The diff with every hiding character escaped (see the module's text)."""
        shown = [self._shown_line(line) for line in text.split("\n")]
        super().show("\n".join(shown))

    def _shown_line(self, line: str) -> str:
        indent = _INDENT.match(line)
        head = indent.group() if indent else ""
        if len(head.expandtabs()) > INDENT_SHOWN:
            head = head[:1]
        pieces: list[str] = [head]
        spans: list[tuple[int, int]] = []
        width = len(head.expandtabs())  # the Log expands tabs before it highlights
        for piece, escaped in visible_parts(line[len(head) :], keep_newlines=False):
            if escaped:
                spans.append((width, width + len(piece)))
            pieces.append(piece)
            width += len(piece)
        shown = "".join(pieces).expandtabs() if "\t" in head else "".join(pieces)
        if spans:
            self.diff_highlighter.escapes[shown] = spans
        return shown


class WrappedOutput(VerticalScroll):
    """A finished output of ordinary size, wrapped to the width, scrollable past its height."""

    DEFAULT_CSS = """
    WrappedOutput {
        height: auto;
        background: $surface;
        scrollbar-size: 1 1;
    }
    WrappedOutput .output-text {
        height: auto;
    }
    """

    def __init__(self, text: str, *, height: int) -> None:
        super().__init__(Static(Content(literal(text).rstrip("\n")), classes="output-text"))
        self.styles.max_height = max(1, height)


def output_view(text: str, *, height: int) -> WrappedOutput | OutputLog:
    """The right body for a finished output: wrapped when it is small enough, else a Log."""
    if len(text) <= WRAPPED_OUTPUT_MAX_CHARS and text.count("\n") <= WRAPPED_OUTPUT_MAX_LINES:
        return WrappedOutput(text, height=height)
    return OutputLog(text, height=height)
