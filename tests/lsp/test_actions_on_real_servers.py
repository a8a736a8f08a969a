"""The five reading actions against pylsp and basedpyright (SPEC §4 `lsp` results)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import text_of

EMOJI_LINE = 'banner = "🎉✨ party " + greet("world")'
GREET_DEFINITION = "greetings.py:5:5  def greet(name: str) -> str:"


def ask(workspace: LspWorkspace, action: str, path: str, **fields: Any) -> str:
    return text_of(workspace.execute(LspQuery(action, path, **fields)))


def test_definition_by_symbol_answers_the_place_with_its_source_line(
    shared_workspace: LspWorkspace,
) -> None:
    assert ask(shared_workspace, "definition", "app.py", symbol="greet") == GREET_DEFINITION


def test_definition_by_line_and_column_after_an_emoji_counts_characters(
    shared_workspace: LspWorkspace,
) -> None:
    # 🎉 is two UTF-16 units, ✨ one: a wrong conversion lands beside the identifier.
    column = EMOJI_LINE.index("greet") + 1
    assert ask(shared_workspace, "definition", "app.py", line=3, column=column) == GREET_DEFINITION


def test_a_symbol_with_a_receiver_prefix_and_stray_quotes_means_the_identifier(
    shared_workspace: LspWorkspace,
) -> None:
    answer = ask(shared_workspace, "definition", "greetings.py", symbol="'Person.welcome',")
    assert answer == "greetings.py:16:9  def welcome(self) -> str:"


def test_references_list_every_use_across_files_with_their_columns_in_characters(
    shared_workspace: LspWorkspace,
) -> None:
    assert ask(shared_workspace, "references", "greetings.py", symbol="greet") == "\n".join(
        [
            "4 reference(s):",
            "app.py:1:31  from greetings import Person, greet",
            f"app.py:3:24  {EMOJI_LINE}",
            GREET_DEFINITION,
            "greetings.py:17:16  return greet(self.name)",
        ]
    )


def test_hover_skips_the_comment_that_names_the_symbol_first(
    shared_workspace: LspWorkspace,
) -> None:
    # Line 4 is a comment citing greet; code lines are tried before comment lines.
    answer = ask(shared_workspace, "hover", "greetings.py", symbol="greet")
    assert "greet(name: str) -> str" in answer
    assert "Return a greeting for name." in answer


def test_hover_on_the_emoji_line_restricted_by_line(shared_workspace: LspWorkspace) -> None:
    answer = ask(shared_workspace, "hover", "app.py", symbol="greet", line=3)
    assert "greet(name: str) -> str" in answer


def test_symbols_outline_the_file_with_children_indented(
    shared_workspace: LspWorkspace, server_spec: LspServerSpec
) -> None:
    lines = ask(shared_workspace, "symbols", "greetings.py").splitlines()
    assert lines[0] == "function greet  line 5"
    assert "class Person  line 10" in lines
    assert "  method __init__  line 13" in lines
    assert "  method welcome  line 16" in lines


def test_diagnostics_of_a_broken_file_name_the_error(
    shared_workspace: LspWorkspace, server_spec: LspServerSpec
) -> None:
    answer = ask(shared_workspace, "diagnostics", "broken.py").splitlines()
    assert answer[0] == "1 diagnostic(s) in broken.py:"
    severity, place, *message = answer[1].split(" ")
    assert (severity, place) == ("error", "broken.py:3:26")
    assert "missing_value" in " ".join(message)
    assert answer[1].endswith(
        {"pylsp": "[pyflakes]", "basedpyright": "[basedpyright]"}[server_spec.name]
    )


def test_diagnostics_of_a_clean_file_say_it_is_clean(shared_workspace: LspWorkspace) -> None:
    assert ask(shared_workspace, "diagnostics", "greetings.py").startswith(
        "no diagnostics: greetings.py is clean"
    )


def test_diagnostics_asked_twice_of_an_unchanged_file_say_as_last_published(
    shared_workspace: LspWorkspace, shared_project: Path, server_spec: LspServerSpec
) -> None:
    (shared_project / "twice.py").write_text("answer = 42\n")
    first = ask(shared_workspace, "diagnostics", "twice.py")
    second = ask(shared_workspace, "diagnostics", "twice.py")
    assert first == "no diagnostics: twice.py is clean"
    if server_spec.name == "pylsp":  # pushes its diagnostics: the second call reuses them
        assert second == "no diagnostics: twice.py is clean (as last published)"
    else:  # basedpyright offers pull diagnostics: each call asks afresh
        assert second == first


def test_an_edit_on_disk_is_seen_by_the_next_call(
    shared_workspace: LspWorkspace, shared_project: Path
) -> None:
    scratch = shared_project / "scratch.py"
    scratch.write_text("value = 1\n")
    assert (
        ask(shared_workspace, "diagnostics", "scratch.py") == "no diagnostics: scratch.py is clean"
    )
    scratch.write_text("value = 1\nprint(undefined_name)\n")
    answer = ask(shared_workspace, "diagnostics", "scratch.py")
    assert answer.startswith("1 diagnostic(s) in scratch.py:\nerror scratch.py:2:7 ")
    scratch.write_text("value = 2\n")
    assert (
        ask(shared_workspace, "diagnostics", "scratch.py") == "no diagnostics: scratch.py is clean"
    )


def test_a_symbol_absent_from_the_file_is_refused_before_asking(
    shared_workspace: LspWorkspace,
) -> None:
    assert ask(shared_workspace, "definition", "app.py", symbol="foo") == (
        '[lsp: "foo" not found in app.py]'
    )
    assert ask(shared_workspace, "definition", "app.py", symbol="greet", line=4) == (
        '[lsp: "greet" not found on line 4 of app.py]'
    )


def test_positions_past_the_end_are_refused_with_the_count(
    shared_workspace: LspWorkspace,
) -> None:
    assert ask(shared_workspace, "hover", "app.py", line=3, column=40) == (
        "[lsp: column 40 is past the end of line 3 (37 characters)]"
    )
    assert ask(shared_workspace, "hover", "app.py", line=9, column=1) == (
        "[lsp: line 9 is past the end of app.py (4 lines)]"
    )


def test_a_place_with_nothing_to_define_says_so(shared_workspace: LspWorkspace) -> None:
    # Column 1 of line 3 of broken.py is indentation: no server defines whitespace.
    assert ask(shared_workspace, "definition", "broken.py", line=3, column=1) == (
        "[lsp: no definition found for the symbol at broken.py:3:1]"
    )


def test_a_file_no_server_serves_names_the_configured_ones(
    shared_workspace: LspWorkspace, shared_project: Path, server_spec: LspServerSpec
) -> None:
    (shared_project / "notes.md").write_text("# notes\n")
    assert ask(shared_workspace, "hover", "notes.md", symbol="notes") == (
        f'[lsp: no language server for "notes.md" — configured: {server_spec.name} (.py .pyi)]'
    )
