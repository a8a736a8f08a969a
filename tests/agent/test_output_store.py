"""A call's whole output is kept beside the session, bounded: head and tail, the gap said."""

from __future__ import annotations

from pathlib import Path

from mm_tui.agent.output_store import (
    FullOutputWriter,
    output_file,
    outputs_dir,
    read_full_output,
)


def test_an_output_under_the_limit_is_kept_whole(tmp_path: Path) -> None:
    session = tmp_path / "sessions" / "20260101-abc.json"
    writer = FullOutputWriter(output_file(session, "call_1"), limit=1_000)
    for part in ("collecting...\n", "12 passed", " in 0.3s\n"):
        writer.append(part)
    writer.close()

    assert outputs_dir(session) == tmp_path / "sessions" / "20260101-abc.outputs"
    assert read_full_output(session, "call_1") == "collecting...\n12 passed in 0.3s\n"


def test_a_huge_output_keeps_its_head_and_tail_and_says_the_gap(tmp_path: Path) -> None:
    session = tmp_path / "s.json"
    writer = FullOutputWriter(output_file(session, "c"), limit=100)
    text = "".join(f"{i:05d}\n" for i in range(10_000))  # 60,000 characters in many pieces
    for start in range(0, len(text), 7):
        writer.append(text[start : start + 7])
    writer.close()

    kept = read_full_output(session, "c")
    assert kept is not None
    assert kept.startswith(text[:50])
    assert kept.endswith(text[-50:])
    assert "[… 59,900 characters not kept here …]" in kept


def test_no_kept_output_reads_as_none_and_odd_call_ids_make_safe_names(tmp_path: Path) -> None:
    session = tmp_path / "s.json"
    assert read_full_output(session, "missing") is None
    assert output_file(session, "../../etc/passwd").parent == outputs_dir(session)


def test_an_unwritable_folder_loses_the_copy_not_the_turn(tmp_path: Path) -> None:
    blocker = tmp_path / "s.outputs"
    blocker.write_text("a file where the folder should be")
    writer = FullOutputWriter(output_file(tmp_path / "s.json", "c"))
    writer.append("text")
    writer.close()

    assert read_full_output(tmp_path / "s.json", "c") is None
