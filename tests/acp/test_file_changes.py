"""The core's unified diffs turned back into whole old and new texts for ACP's diff content."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from mm_tui.acp.file_changes import apply, changes_after, changes_before, parse_unified
from mm_tui.acp.server import prompt_text
from mm_tui.agent.tools.diffs import diff_texts

#: Lines as files have them: CRLF ends (`a\r`), a lone `\r` inside, a form feed and a line
#: separator (both end a line for `str.splitlines`, never for a diff), a removed `-- x`.
lines = st.lists(
    st.sampled_from(
        ["a", "b", "c", "", "  x", "é", "a\r", "in\rside", "\x0cpage", "u\u2028v", "-- x"]
    ),
    max_size=30,
)


def text_of(items: list[str], final_newline: bool) -> str:
    text = "\n".join(items)
    return text + "\n" if final_newline and items else text


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.booleans(), st.booleans())
def test_any_diff_of_the_core_applies_forwards_and_backwards(
    old_lines: list[str], new_lines: list[str], old_end: bool, new_end: bool
) -> None:
    old, new = text_of(old_lines, old_end), text_of(new_lines, new_end)
    diff = diff_texts(old, new, "f.txt", created=not old)
    if diff.is_empty:
        return
    [patch] = parse_unified(diff.unified)
    assert apply(old, patch) == new
    assert apply(new, patch, reverse=True) == old


def test_a_crlf_file_keeps_its_line_ends() -> None:
    old, new = "one\r\ntwo\r\n", "one\r\nTWO\r\n"
    diff = diff_texts(old, new, "f.txt")
    assert "-two\r\n+TWO\r\n" in diff.unified  # the diff keeps the file's line ends
    assert "\r" not in diff.numbered  # the model's numbered lines do not
    [patch] = parse_unified(diff.unified)
    assert apply(old, patch) == new and apply(new, patch, reverse=True) == old


def test_mixed_line_ends_are_kept_line_by_line() -> None:
    old = "crlf\r\nlf\nlone\rcr\r\nend"
    new = "crlf\r\nLF\nlone\rcr\r\nEND"
    [patch] = parse_unified(diff_texts(old, new, "f.txt").unified)
    assert apply(old, patch) == new and apply(new, patch, reverse=True) == old


def test_a_renames_diff_keeps_line_ends_and_a_missing_final_newline(tmp_path: Path) -> None:
    from mm_tui.lsp.workspace_edit import FileChange as RenameChange
    from mm_tui.lsp.workspace_edit import changes_diff

    path = tmp_path / "m.py"
    old, new = "a = greet\r\nb\x0c = greet\r\ngreet", "a = hello\r\nb\x0c = hello\r\nhello"
    path.write_text(new, newline="")
    diff = changes_diff([RenameChange(path, old, new, 3)], tmp_path)
    [after] = changes_after(diff, tmp_path)
    assert (after.old, after.new) == (old, new)


def test_a_diff_that_does_not_fit_the_file_gives_no_text(tmp_path: Path) -> None:
    diff = diff_texts("a\nb\n", "a\nc\n", "f.txt").unified
    (tmp_path / "f.txt").write_text("something else\n")
    assert changes_before(diff, tmp_path) == []
    assert changes_after(diff, tmp_path) == []


def test_changes_before_and_after_read_the_disk(tmp_path: Path) -> None:
    diff = diff_texts("a\nb\n", "a\nc\n", "sub/f.txt").unified
    (tmp_path / "sub").mkdir()
    path = tmp_path / "sub/f.txt"
    path.write_text("a\nb\n")
    [before] = changes_before(diff, tmp_path)
    assert (before.path, before.old, before.new) == (path, "a\nb\n", "a\nc\n")
    path.write_text("a\nc\n")
    [after] = changes_after(diff, tmp_path)
    assert (after.old, after.new) == ("a\nb\n", "a\nc\n")
    created = diff_texts("", "new\n", "n.txt", created=True).unified
    [new_file] = changes_before(created, tmp_path)
    assert (new_file.old, new_file.new) == (None, "new\n")


def test_prompt_blocks_become_the_users_message(tmp_path: Path) -> None:
    from acp import resource_block, resource_link_block, text_block
    from acp.schema import TextResourceContents

    blocks = [
        text_block("explain"),
        resource_link_block("a.py", (tmp_path / "src/a.py").as_uri()),
        resource_block(TextResourceContents(uri="file:///etc/hosts", text="127.0.0.1 x")),
    ]
    assert prompt_text(blocks, tmp_path) == (
        "explain @src/a.py \n/etc/hosts:\n```\n127.0.0.1 x\n```"
    )
