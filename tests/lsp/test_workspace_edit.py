"""Applying a WorkspaceEdit to real files: both forms, the order, the root, the encodings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mm_tui.lsp.rename_write import FilesRefused, RenameFailed, write_changes
from mm_tui.lsp.text import UTF8, UTF16, UTF32
from mm_tui.lsp.workspace_edit import EditRefused, apply_text_edits, plan_changes


def edit(line: int, start: int, end: int, new: str) -> dict[str, object]:
    return {
        "range": {
            "start": {"line": line, "character": start},
            "end": {"line": line, "character": end},
        },
        "newText": new,
    }


TEXT = 'x = "🎉" + greet("a") + greet("b")\n'


@pytest.mark.parametrize(
    ("encoding", "first", "second"),
    [(UTF16, (11, 16), (24, 29)), (UTF32, (10, 15), (23, 28)), (UTF8, (13, 18), (26, 31))],
)
def test_edits_after_an_emoji_land_on_the_identifier_in_every_encoding(
    encoding: str, first: tuple[int, int], second: tuple[int, int]
) -> None:
    edits = [edit(0, *first, "hi"), edit(0, *second, "hi")]
    assert apply_text_edits(TEXT, edits, encoding) == 'x = "🎉" + hi("a") + hi("b")\n'


def test_edits_are_applied_from_the_end_whatever_order_they_come_in() -> None:
    text = "aaa bbb ccc\n"
    edits = [edit(0, 0, 3, "A"), edit(0, 8, 11, "CCCCC"), edit(0, 4, 7, "")]
    assert apply_text_edits(text, edits, UTF16) == "A  CCCCC\n"


def test_overlapping_edits_are_refused() -> None:
    with pytest.raises(EditRefused, match="overlapping"):
        apply_text_edits("abcdef\n", [edit(0, 0, 4, "x"), edit(0, 2, 5, "y")], UTF16)


def test_a_range_past_the_end_of_the_file_ends_at_the_end() -> None:
    # pylsp replaces a whole file with an end one line past its last line.
    whole = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 0}}}
    assert apply_text_edits("a\nb\n", [{**whole, "newText": "c\n"}], UTF32) == "c\n"


def test_document_changes_win_over_changes_and_are_never_both_applied(tmp_path: Path) -> None:
    target = tmp_path / "m.py"
    target.write_text("old = 1\n")
    uri = target.as_uri()
    answer = {
        "changes": {uri: [edit(0, 0, 3, "from_changes")]},
        "documentChanges": [
            {"textDocument": {"uri": uri, "version": None}, "edits": [edit(0, 0, 3, "new")]}
        ],
    }
    changes = plan_changes(answer, tmp_path, UTF16)
    assert [(c.new_text, c.edit_count) for c in changes] == [("new = 1\n", 1)]


def test_an_edit_outside_the_project_root_refuses_the_whole_rename(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "elsewhere.py"
    project.mkdir()
    inside = project / "a.py"
    inside.write_text("name = 1\n")
    outside.write_text("name = 2\n")
    answer = {
        "changes": {
            inside.as_uri(): [edit(0, 0, 4, "renamed")],
            outside.as_uri(): [edit(0, 0, 4, "renamed")],
        }
    }
    with pytest.raises(EditRefused, match="outside the project root"):
        plan_changes(answer, project, UTF16)
    assert inside.read_text() == "name = 1\n"
    assert outside.read_text() == "name = 2\n"


def test_file_creations_and_renames_are_refused(tmp_path: Path) -> None:
    answer = {"documentChanges": [{"kind": "rename", "oldUri": "file:///a", "newUri": "file:///b"}]}
    with pytest.raises(EditRefused, match="rename a file"):
        plan_changes(answer, tmp_path, UTF16)


def test_writing_keeps_the_mode_and_undecodable_bytes(tmp_path: Path) -> None:
    target = tmp_path / "tool.py"
    target.write_bytes(b"name = 1  # caf\xe9\n")
    target.chmod(0o751)
    changes = plan_changes(
        {"changes": {target.as_uri(): [edit(0, 0, 4, "label")]}}, tmp_path, UTF16
    )
    write_changes(changes)
    assert target.read_bytes() == b"label = 1  # caf\xe9\n"
    assert target.stat().st_mode & 0o777 == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["tool.py"]


# ---- a hostile server's WorkspaceEdit -------------------------------------------------------


def test_a_symlink_in_the_project_pointing_out_of_it_is_not_a_way_out(tmp_path: Path) -> None:
    project, secret = tmp_path / "project", tmp_path / "secret.py"
    project.mkdir()
    secret.write_text("name = 2\n")
    (project / "link.py").symlink_to(secret)
    answer = {"changes": {(project / "link.py").as_uri(): [edit(0, 0, 4, "renamed")]}}
    with pytest.raises(EditRefused, match="outside the project root"):
        plan_changes(answer, project, UTF16)
    assert secret.read_text() == "name = 2\n"
    assert (project / "link.py").is_symlink()


@pytest.mark.parametrize(
    "where",
    [
        {"start": {"line": -1, "character": 0}, "end": {"line": -1, "character": 4}},
        {"start": {"line": 0, "character": -3}, "end": {"line": 0, "character": 4}},
        {"start": {"line": "0", "character": 0}, "end": {"line": 0, "character": 4}},
        {"start": {"line": 0, "character": True}, "end": {"line": 0, "character": 4}},
    ],
)
def test_an_edit_with_a_negative_or_non_numeric_position_is_refused(
    tmp_path: Path, where: dict[str, object]
) -> None:
    # A line of -1 would be the last line (Python indexing): the wrong place, silently.
    path = tmp_path / "a.py"
    path.write_text("name = 1\nlast = 2\n")
    answer = {"changes": {path.as_uri(): [{"range": where, "newText": "renamed"}]}}
    with pytest.raises(EditRefused, match="an invalid range"):
        plan_changes(answer, tmp_path, UTF16)


@pytest.mark.parametrize("uri", ["untitled:a.py", "https://example.com/a.py", "a.py"])
def test_an_edit_to_something_not_a_file_is_refused(tmp_path: Path, uri: str) -> None:
    (tmp_path / "a.py").write_text("name = 1\n")
    with pytest.raises(EditRefused, match="not a file on disk"):
        plan_changes({"changes": {uri: [edit(0, 0, 4, "renamed")]}}, tmp_path, UTF16)
    assert (tmp_path / "a.py").read_text() == "name = 1\n"


def test_an_edit_listed_twice_is_applied_once() -> None:
    twice = [edit(0, 0, 4, "renamed"), edit(0, 0, 4, "renamed")]
    assert apply_text_edits("name = 1\n", twice, UTF16) == "renamed = 1\n"


def test_a_huge_rename_is_applied_in_one_pass(tmp_path: Path) -> None:
    # 100,000 edits in a 1.1 MB file: applied one by one, each copying the file, this took
    # minutes; the result is built from pieces once.
    path = tmp_path / "big.py"
    count = 100_000
    path.write_text("greet(1)\n" * count)
    edits = [edit(line, 0, 5, "salute") for line in range(count)]
    [change] = plan_changes({"changes": {path.as_uri(): edits}}, tmp_path, UTF16)
    assert change.new_text == "salute(1)\n" * count
    assert change.edit_count == count


def test_a_file_deleted_between_the_plan_and_the_write_is_not_brought_back(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "a.py", tmp_path / "b.py"
    first.write_text("greet = 1\n")
    second.write_text("greet = 2\n")
    answer = {"changes": {p.as_uri(): [edit(0, 0, 5, "salute")] for p in (first, second)}}
    changes = plan_changes(answer, tmp_path, UTF16, ("greet", "salute"))

    def meanwhile(path: Path) -> None:
        if path == second:
            second.unlink()  # the person's editor, or `git checkout`, removes it

    with pytest.raises(
        RenameFailed, match="b.py not written: it was deleted after the question was asked"
    ):
        write_changes(changes, "salute", meanwhile)
    assert first.read_text() == "greet = 1\n"  # restored
    assert not second.exists()


def test_a_file_rewritten_between_the_plan_and_the_write_is_not_written_over(
    tmp_path: Path,
) -> None:
    path = tmp_path / "a.py"
    path.write_text("greet = 1\n")
    answer = {"changes": {path.as_uri(): [edit(0, 0, 5, "salute")]}}
    changes = plan_changes(answer, tmp_path, UTF16, ("greet", "salute"))
    path.write_text("greet = 1\nnew_work = 2\n")
    with pytest.raises(FilesRefused) as refused:
        write_changes(changes, "salute")
    assert refused.value.lines == [
        "a.py: its content changed after it was read (another program wrote it)"
    ]
    assert path.read_text() == "greet = 1\nnew_work = 2\n"


# ---- a hostile repository: links made to lead out of the project ----------------------------


def test_a_hard_link_to_a_file_outside_the_project_is_never_edited(tmp_path: Path) -> None:
    # A file with other hard links is written in place (support/atomic_write.py): a rename
    # would change the outside file, which no path check sees.
    project, secret = tmp_path / "project", tmp_path / "secret.py"
    project.mkdir()
    secret.write_text("name = 2\n")
    os.link(secret, project / "linked.py")
    answer = {"changes": {(project / "linked.py").as_uri(): [edit(0, 0, 4, "renamed")]}}
    with pytest.raises(
        EditRefused, match="linked.py has 1 other hard link\\(s\\), which a rename would"
    ):
        plan_changes(answer, project, UTF16)
    assert secret.read_text() == "name = 2\n"


def test_a_file_made_a_link_after_its_path_was_resolved_is_not_followed(tmp_path: Path) -> None:
    # Resolved paths are remembered for the session; bash (or the person) then replaces the
    # file by a link to one outside the project, holding the same text.
    project, secret = tmp_path / "project", tmp_path / "secret.py"
    project.mkdir()
    target = project / "a.py"
    target.write_text("name = 1\n")
    answer = {"changes": {target.as_uri(): [edit(0, 0, 4, "renamed")]}}
    assert [c.new_text for c in plan_changes(answer, project, UTF16)] == ["renamed = 1\n"]
    secret.write_text("name = 1\n")
    target.unlink()
    target.symlink_to(secret)
    with pytest.raises(EditRefused, match=f"a.py is now a link to {secret}"):
        plan_changes(answer, project, UTF16)
    assert secret.read_text() == "name = 1\n"


def test_a_file_made_a_link_between_the_plan_and_the_write_is_not_written(
    tmp_path: Path,
) -> None:
    project, secret = tmp_path / "project", tmp_path / "secret.py"
    project.mkdir()
    first, second = project / "a.py", project / "b.py"
    first.write_text("greet = 1\n")
    second.write_text("greet = 2\n")
    secret.write_text("greet = 2\n")
    answer = {"changes": {p.as_uri(): [edit(0, 0, 5, "salute")] for p in (first, second)}}
    changes = plan_changes(answer, project, UTF16, ("greet", "salute"))

    def meanwhile(path: Path) -> None:
        if path == second:
            second.unlink()
            second.symlink_to(secret)

    with pytest.raises(
        RenameFailed, match="b.py not written: it became a symbolic link after the question"
    ):
        write_changes(changes, "salute", meanwhile)
    assert first.read_text() == "greet = 1\n"  # restored
    assert secret.read_text() == "greet = 2\n"
