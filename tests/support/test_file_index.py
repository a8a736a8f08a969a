"""The `@` file index: the project's files as git sees them, found by a few typed letters."""

from __future__ import annotations

from pathlib import Path

from mm_tui.support.file_index import FileIndex, fuzzy_score


def make_tree(root: Path, files: list[str]) -> None:
    for rel in files:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(rel)


def test_ignored_files_and_folders_are_not_listed_and_negations_keep_files(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        [
            "src/greeter.py",
            "src/build/gen.py",
            "build/out.bin",
            "debug.log",
            "keep.log",
            "node_modules/left/pad.js",
            ".git/HEAD",
            "docs/notes.md",
            "docs/draft.tmp",
        ],
    )
    (tmp_path / ".gitignore").write_text("build/\n*.log\n!keep.log\nnode_modules\n")
    (tmp_path / "docs" / ".gitignore").write_text("*.tmp\n")

    index = FileIndex(tmp_path)

    assert index.paths == [
        ".gitignore",
        "docs/.gitignore",
        "docs/notes.md",
        "keep.log",
        "src/greeter.py",
    ]
    assert not index.truncated


def test_a_nested_ignore_file_applies_only_below_its_folder(tmp_path: Path) -> None:
    make_tree(tmp_path, ["a/x.tmp", "b/x.tmp"])
    (tmp_path / "a" / ".gitignore").write_text("*.tmp\n")

    assert "a/x.tmp" not in FileIndex(tmp_path).paths
    assert "b/x.tmp" in FileIndex(tmp_path).paths


def test_a_huge_tree_is_cut_and_says_so(tmp_path: Path) -> None:
    make_tree(tmp_path, [f"f{i:03}.txt" for i in range(30)])

    index = FileIndex(tmp_path, max_files=10)

    assert len(index.paths) == 10
    assert index.truncated


def test_typed_letters_find_the_file_name_first(tmp_path: Path) -> None:
    make_tree(
        tmp_path,
        ["src/greeter.py", "tests/test_greeter.py", "grammar/every_thing.py", "README.md"],
    )
    index = FileIndex(tmp_path)

    found = [match.path for match in index.search("greeter")]
    assert found[:2] == ["src/greeter.py", "tests/test_greeter.py"]
    assert "README.md" not in found
    assert [m.path for m in index.search("tgr")][0] == "tests/test_greeter.py"
    assert index.search("zzz") == []


def test_a_match_needs_every_letter_in_order() -> None:
    assert fuzzy_score("abc", "a/b/c.py") is not None
    assert fuzzy_score("cba", "a/b/c.py") is None
    assert fuzzy_score("GREET", "src/greeter.py") == fuzzy_score("greet", "src/greeter.py")
