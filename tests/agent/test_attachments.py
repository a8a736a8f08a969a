"""`@path` in a message attaches the file's content for the model, bounded and said."""

from __future__ import annotations

from pathlib import Path

from mm_tui.agent.attachments import attach_mentions, mentioned_paths


def test_mentions_are_read_once_each_and_ordinary_at_signs_are_left_alone() -> None:
    text = "compare @src/a.py with @b.py, mail me@example.com and @src/a.py again"
    assert mentioned_paths(text) == ["src/a.py", "b.py"]


def test_a_mentioned_file_goes_to_the_model_after_the_text_and_is_said(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("print('hi')\n")

    attached = attach_mentions("explain @src/a.py please", tmp_path)

    assert attached.for_model == (
        "explain @src/a.py please\n\n<file path=\"src/a.py\">\nprint('hi')\n\n</file>"
    )
    assert attached.notes == ["📎 src/a.py (12 characters)"]


def test_a_big_file_is_cut_and_the_note_says_how_much(tmp_path: Path) -> None:
    (tmp_path / "big.log").write_text("x" * 50_000)

    attached = attach_mentions("@big.log", tmp_path, max_file_chars=1_000)

    assert attached.notes == ["📎 big.log (cut at 1,000 of 50,000 characters)"]
    assert "[… cut: 49,000 more characters]" in attached.for_model
    assert len(attached.for_model) < 1_200


def test_the_message_budget_is_shared_between_files(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (tmp_path / name).write_text("y" * 600)

    attached = attach_mentions(
        "@a.txt @b.txt @c.txt", tmp_path, max_file_chars=1_000, max_total_chars=1_000
    )

    assert attached.notes == [
        "📎 a.txt (600 characters)",
        "📎 b.txt (cut at 400 of 600 characters)",
        "📎 c.txt not attached: the message already carries 1,000 characters of files",
    ]


def test_binary_files_missing_files_and_paths_outside_the_project_are_not_read(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "logo.png").write_bytes(b"\x89PNG\0\0binary")
    (tmp_path / "secret.txt").write_text("outside")

    attached = attach_mentions("@logo.png @missing.py @../secret.txt", project)

    assert attached.notes == ["📎 logo.png not attached: binary file"]
    assert "outside" not in attached.for_model
    assert attached.for_model == "@logo.png @missing.py @../secret.txt"
