"""The window's small parts, each on its own: literal text, history, completion, the bridge."""

from __future__ import annotations

import json
from pathlib import Path

from mm_tui.agent.events import (
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolStarted,
    ToolStatus,
    TurnStarted,
    Usage,
)
from mm_tui.support.terminal_text import first_line, literal
from mm_tui.widgets.prompt_history import PromptHistory
from mm_tui.widgets.tool_row import format_duration, row_title
from mm_tui.widgets.top_line import context_text, short_server
from mm_tui.window.event_bridge import coalesce
from mm_tui.window.slash_commands import complete_command, matching_commands, parse_command


def test_escape_sequences_and_control_characters_are_removed() -> None:
    text = "\x1b[1;31mred\x1b[0m \x1b]0;title\x07tab\there\x00\x07 bell\x9b2J"
    assert literal(text) == "red tab\there bell"


def test_carriage_returns_keep_what_a_terminal_shows() -> None:
    assert literal("10%\r50%\r100%\nnext\r\n") == "100%\nnext\n"


def test_markup_is_left_alone() -> None:
    assert literal("[bold]x[/bold] [link=y]z[/link]") == "[bold]x[/bold] [link=y]z[/link]"


def test_a_multi_line_title_shows_its_first_line_and_says_more_follow() -> None:
    assert first_line("cat <<EOF\nhello\nEOF") == "cat <<EOF …"
    assert first_line("ls\n") == "ls"


def test_history_walks_back_and_forth_and_restores_the_draft(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    for text in ("one", "two\nlines", "two\nlines", "three"):
        history.add(text)
    assert history.entries == ["one", "two\nlines", "three"]
    assert history.previous("draft") == "three"
    assert history.previous("three") == "two\nlines"
    assert history.next() == "three"
    assert history.next() == "draft"
    assert history.next() is None


def test_history_is_kept_across_runs_and_survives_a_damaged_line(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    PromptHistory(path).add("first")
    with path.open("a") as file:
        file.write("{not json\n")
    PromptHistory(path).add("second")
    assert PromptHistory(path).entries == ["first", "second"]
    assert [json.loads(line) for line in path.read_text().splitlines() if line[0] == '"'] == [
        "first",
        "second",
    ]


def test_slash_commands_complete_and_parse() -> None:
    assert [c.name for c in matching_commands("/")][:3] == ["/new", "/compact", "/help"]
    assert complete_command("/he") == "/help "
    assert complete_command("/help ") is None
    assert complete_command("hello") is None
    command, word, argument = parse_command("/exp notes.md")  # type: ignore[misc]
    assert (command.name, word, argument) == ("/export", "/exp", "notes.md")
    assert parse_command("/nope")[0] is None  # type: ignore[index]
    assert parse_command("/etc/hosts is broken") is None


def test_deltas_are_joined_in_order_without_crossing_other_events() -> None:
    events = [
        TextDelta("a"),
        TextDelta("b"),
        ToolOutputDelta("c1", "x"),
        ToolOutputDelta("c1", "y"),
        ToolOutputDelta("c2", "z"),
        TurnStarted("t"),
        TextDelta("c"),
    ]
    assert coalesce(events) == [
        TextDelta("ab"),
        ToolOutputDelta("c1", "xy"),
        ToolOutputDelta("c2", "z"),
        TurnStarted("t"),
        TextDelta("c"),
    ]


def test_a_state_or_usage_followed_by_another_in_the_same_take_is_dropped() -> None:
    """Only the last of a take is drawn (one frame a take): the others cost the window's
    thread for nothing (a flood of calls brings one of each per call)."""
    started = ToolStarted("c1", "bash", {}, "bash x")
    finished = ToolFinished("c1", "bash", "", ToolStatus.DONE, 0.1, "x")
    events = [SpinnerChanged("Running bash"), started, Usage(10, 1), SpinnerChanged("Waiting"),
              finished, Usage(20, 2), TextDelta("a")]  # fmt: skip
    assert coalesce(events) == [started, SpinnerChanged("Waiting"), finished, Usage(20, 2),
                                TextDelta("a")]  # fmt: skip


def test_small_formats() -> None:
    assert [format_duration(s) for s in (0.04, 12.0, 125.0)] == ["0.0s", "12.0s", "2m 05s"]
    lsp = {"action": "definition", "path": "main.go", "symbol": "greet"}
    assert row_title("lsp", lsp, "") == "lsp definition main.go greet"
    assert row_title("bash", {"command": "ls"}, "") == "bash ls"
    assert context_text(1234, 8192) == "context 1.2k/8.2k (15%)"
    assert short_server("http://localhost:11434/v1") == "localhost:11434/v1"
