"""The look every picker shares: a bordered panel centred on its screen.

Each picker's `DEFAULT_CSS` starts with it; Textual scopes the `.picker` rules to that picker's
screen (a rule not naming the screen first is read as inside it)."""

from __future__ import annotations

PICKER_RULES = """
.picker {
    width: 70;
    max-width: 90%;
    height: auto;
    max-height: 80%;
    border: round $accent;
    background: $surface;
    padding: 0 1;
}
.picker OptionList {
    height: auto;
    max-height: 20;
}
"""


def picker_look(screen: str) -> str:
    """The shared rules, for the screen class named `screen`."""
    return f"{screen} {{ align: center middle; }}" + PICKER_RULES
