"""Symbol cleaning, occurrence order and column conversions: the parts without a server."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mm_tui.lsp.symbols import (
    Occurrence,
    clean_symbol,
    find_occurrences,
    identifier_at,
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
from mm_tui.lsp.words import rule_for, widened


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


@pytest.mark.parametrize(
    ("path", "raw", "name", "text", "places"),
    [
        # A CSS custom property is one name, written bare or inside var().
        (
            "a.css",
            "var(--brand-color)",
            "--brand-color",
            "a { color: var(--brand-color); }",
            [(0, 15)],
        ),
        ("a.scss", "$brand-color", "$brand-color", "$brand-color: red;\n$brand: blue;", [(0, 0)]),
        # Lisp and Clojure names hold dashes, ? and !; a namespace/ is a qualifier.
        ("a.el", "valid-name?", "valid-name?", "(defun valid-name? (x) (valid-name x))", [(0, 7)]),
        ("a.clj", "str/join", "join", '(str/join "," (join-all xs))', [(0, 5)]),
        # Elixir and Ruby: a trailing ? or ! is part of the name.
        ("a.ex", "valid?", "valid?", "def valid?(x), do: valid(x)", [(0, 4)]),
        ("a.rb", "save!", "save!", "def save!\n  save\nend", [(0, 4)]),
        # Ruby's @x and PHP's $x: the sigil is part of the name, found also when left out.
        ("a.rb", "@name", "@name", "@name = name\n", [(0, 0)]),
        ("a.php", "x", "x", "<?php $x = 1; echo $x; $xy = 2;", [(0, 7), (0, 20)]),
        ("a.php", "$x", "$x", "<?php $x = 1; echo $x;", [(0, 6), (0, 19)]),
        # A shell function name holds dashes; `./greet.sh` is no use of `greet`.
        ("a.sh", "greet-all", "greet-all", "source ./greet.sh\ngreet-all; greet", [(1, 0)]),
        ("a.sh", "greet", "greet", "source ./greet.sh\ngreet-all; greet", [(1, 11)]),
        # A language without a rule: a dashed name the model wrote is kept where the file has it.
        ("a.unknown", "brand-color", "brand-color", "brand-color = 1\ncolor = 2", [(0, 0)]),
        ("a.unknown", "person.Greet", "Greet", "person.Greet()", [(0, 7)]),
    ],
)
def test_what_counts_as_one_name_follows_the_language(
    path: str, raw: str, name: str, text: str, places: list[tuple[int, int]]
) -> None:
    rule = widened(rule_for(path), raw, text)
    assert clean_symbol(raw, rule) == name
    found = find_occurrences(text, name, None, rule)
    assert [(o.line, o.column) for o in found] == places
    line, column = places[0]
    at = identifier_at(text.splitlines()[line], column, rule)
    assert at.lstrip("$@") == name.lstrip("$@")  # PHP's `x` is the file's `$x`
