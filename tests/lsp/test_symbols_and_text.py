"""Symbol cleaning, occurrence order and column conversions: the parts without a server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mm_tui.lsp.symbols import (
    Occurrence,
    clean_symbol,
    find_occurrences,
    symbol_and_new_name,
)
from mm_tui.lsp.text import (
    UTF8,
    UTF16,
    UTF32,
    counted_lines,
    from_wire_column,
    line_starts,
    offset_of,
    split_lines,
    to_wire_column,
)


@pytest.mark.parametrize(
    ("written", "meant"),
    [
        ("greet", "greet"),
        ("Greet',", "Greet"),
        ("`greet`", "greet"),
        ("person.Greet", "Greet"),
        ("self.welcome()", "welcome"),
        ("greet(name)", "greet"),
        ("std::mem::swap", "swap"),
        ("node->next", "next"),
        ("func greet", "greet"),
        ("def greet(name: str)", "greet"),
        ("$scope", "$scope"),
        ("naïve_total", "naïve_total"),
        ("  ", ""),
        ("()", ""),
    ],
)
def test_a_symbol_is_cleaned_to_the_identifier_it_means(written: str, meant: str) -> None:
    assert clean_symbol(written) == meant


def test_the_several_words_form_gives_symbol_and_new_name() -> None:
    assert symbol_and_new_name("Greet 1 12 Hello", "") == ("Greet", "Hello")
    assert symbol_and_new_name("greet -> salute", "") == ("greet", "salute")
    assert symbol_and_new_name("person.Greet", "'Hello',") == ("Greet", "Hello")
    assert symbol_and_new_name("greet", "") == ("greet", "")


def test_occurrences_are_whole_words_code_lines_first_then_comments() -> None:
    text = (
        "# greet says hello\n"  # 0: a comment citing the name
        "def greet(name):\n"  # 1
        "    greeting = greet_all(name)  // greet\n"  # 2: only the trailing word is whole
        "    return greet(name)\n"  # 3
    )
    assert find_occurrences(text, "greet") == [
        Occurrence(1, 4),
        Occurrence(2, 35),
        Occurrence(3, 11),
        Occurrence(0, 2),
    ]
    assert find_occurrences(text, "greet", only_line=3) == [Occurrence(3, 11)]
    assert find_occurrences(text, "missing") == []


def test_columns_convert_between_characters_and_each_encoding() -> None:
    line = 'x = "🎉é" + name'
    index = line.index("name")  # 11 characters in
    assert to_wire_column(line, index, UTF32) == 11
    assert to_wire_column(line, index, UTF16) == 12  # 🎉 takes two UTF-16 units
    assert to_wire_column(line, index, UTF8) == 15  # 🎉 four bytes, é two
    for encoding in (UTF8, UTF16, UTF32):
        assert from_wire_column(line, to_wire_column(line, index, encoding), encoding) == index
    assert from_wire_column(line, 999, UTF16) == len(line)  # past the end: clamped


@given(st.text(), st.sampled_from([UTF8, UTF16, UTF32]))
def test_every_character_position_survives_the_round_trip(line: str, encoding: str) -> None:
    line = "".join(split_lines(line))  # one line: no breaks inside
    for index in range(len(line) + 1):
        assert from_wire_column(line, to_wire_column(line, index, encoding), encoding) == index


def test_lines_end_where_lsp_ends_them() -> None:
    text = "a\r\nb\rc\nd\u2028e"  # U+2028 is not an LSP line break
    assert split_lines(text) == ["a", "b", "c", "d\u2028e"]
    assert line_starts(text) == [0, 3, 5, 7]
    assert offset_of(text, line_starts(text), 3, 2, UTF16) == 9
    assert counted_lines("a\nb\n") == 2
    assert counted_lines("a\nb") == 2
    assert counted_lines("") == 0
