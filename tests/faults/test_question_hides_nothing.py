"""What a question, a diff or a row shows hides nothing: every invisible, filler, zero-width,
bidi and line-moving character is an escape, and a run of one is counted so that what
follows it stays in view."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from mm_tui.agent.tools.bash import BashTool
from mm_tui.support.terminal_text import hides, visible
from mm_tui.widgets.permission import size_lines

#: Letters and marks that draw nothing (Unicode's Other_Default_Ignorable_Code_Point and
#: the variation selectors), and the braille blank.
FILLERS = "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
FILLERS += "\ufe00\ufe0f\U000e0100\U000e01ef\U000e0001\U000e007f"
CATEGORIES = {"Cc", "Cf", "Zs", "Zl", "Zp"}
PADDED = "echo hi" + "\u3164" * 2000 + "; touch PWNED"


def test_every_character_of_the_hiding_categories_and_every_filler_is_escaped() -> None:
    hiding = [
        chr(code)
        for code in range(sys.maxunicode + 1)
        if unicodedata.category(chr(code)) in CATEGORIES and chr(code) not in "\n "
    ]
    assert len(hiding) > 200  # 245 in Unicode 15
    for char in [*hiding, *FILLERS]:
        assert hides(char), f"U+{ord(char):04X}"
        assert char not in visible(f"a{char}b"), f"U+{ord(char):04X}"


@pytest.mark.parametrize(
    "char", ["\r", "\v", "\f", "\x85", "\u2028", "\u2029", "\u3164", "\u200b", "\u2066"]
)
def test_line_moving_and_invisible_characters_show_as_escapes(char: str) -> None:
    assert visible(f"echo done{char}rm -rf ~") == f"echo done\\{_code(char)}rm -rf ~"


def _code(char: str) -> str:
    return {"\r": "r"}.get(char, f"x{ord(char):02x}" if ord(char) <= 0xFF else f"u{ord(char):04x}")


def test_a_command_padded_with_fillers_shows_what_follows_them() -> None:
    shown = visible(PADDED)
    assert shown == "echo hi⟨2000 × \\u3164⟩; touch PWNED"
    assert BashTool().title({"command": PADDED}) == f"bash {shown}"


def test_the_question_says_how_many_hiding_characters_and_how_long_a_long_command_is() -> None:
    assert size_lines(PADDED) == [
        "the command is 1 line(s), 2,020 characters: all shown below, scroll to read it all",
        "⚠ it holds 2,000 invisible or line-moving character(s), shown as escapes",
    ]
    assert size_lines("git status") == []
    assert size_lines("ls\nls\nls\nls") == [
        "the command is 4 line(s), 11 characters: all shown below, scroll to read it all"
    ]
