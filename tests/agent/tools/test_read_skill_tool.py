"""read_skill over a real skills directory (SPEC §4, tools-reference `read_skill`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.base import ToolContext, ToolKind
from mm_tui.agent.tools.read_skill import DESCRIPTION_SENTENCE, ReadSkillTool
from mm_tui.agent.tools.registry import build_registry


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    folder = tmp_path / ".mm" / "skills"
    folder.mkdir(parents=True)
    (folder / "release.md").write_text(
        "---\nname: release\ndescription: Cut a release and tag it\n---\n# Release\nSteps.\n"
    )
    (folder / "debug").mkdir()
    (folder / "debug" / "SKILL.md").write_text("\n\n# Debugging a crash\n\nRead the log.\n")
    (folder / "both").mkdir()
    (folder / "both" / "SKILL.md").write_text("nested version\n")
    (folder / "both.md").write_text("flat version\n")
    (folder / "notes.txt").write_text("not a skill\n")
    (folder / "empty-dir").mkdir()
    return folder


def read(tool: ReadSkillTool, name: object, max_output: int = 10_000):
    return tool.run({"name": name}, ToolContext(cwd=Path("/"), max_output=max_output))


def test_the_tool_is_not_declared_without_skills(tmp_path: Path) -> None:
    assert ReadSkillTool.discover(tmp_path / "missing") is None
    (tmp_path / "empty").mkdir()
    assert ReadSkillTool.discover(tmp_path / "empty") is None


def test_the_description_is_a_fixed_sentence_then_the_sorted_catalogue(skills: Path) -> None:
    tool = ReadSkillTool.discover(skills)
    assert tool is not None
    assert tool.description == (
        f"{DESCRIPTION_SENTENCE}\n"
        "  both — flat version\n"
        "  debug — Debugging a crash\n"
        "  release — Cut a release and tag it"
    )
    assert tool.kind is ToolKind.SKILL
    assert not tool.needs_permission({"name": "debug"})


def test_a_skill_is_read_whole_from_its_flat_file(skills: Path) -> None:
    result = read(ReadSkillTool(skills), "release")
    assert result.output == (skills / "release.md").read_text()
    assert result.status is ToolStatus.DONE


def test_a_skill_folder_is_read_from_its_skill_md(skills: Path) -> None:
    assert (
        read(ReadSkillTool(skills), "debug").output == "\n\n# Debugging a crash\n\nRead the log.\n"
    )


def test_the_flat_file_wins_over_the_folder(skills: Path) -> None:
    assert read(ReadSkillTool(skills), "both").output == "flat version\n"


def test_an_unknown_name_lists_the_available_skills(skills: Path) -> None:
    result = read(ReadSkillTool(skills), "deploy")
    assert result.output == 'No skill named "deploy". Available skills: both, debug, release'
    assert result.status is ToolStatus.FAILED


def test_only_the_base_name_is_used_so_no_directory_traversal(skills: Path) -> None:
    (skills.parent / "secret.md").write_text("top secret\n")
    tool = ReadSkillTool(skills)
    assert read(tool, "../secret").output.startswith('No skill named "secret".')
    assert read(tool, "/etc/passwd").output.startswith('No skill named "passwd".')
    assert read(tool, "../../x/release").output == (skills / "release.md").read_text()


def test_a_name_given_with_its_md_suffix_is_understood(skills: Path) -> None:
    assert read(ReadSkillTool(skills), "release.md").output.startswith("---\nname: release")


def test_the_skill_is_read_from_disk_on_every_call(skills: Path) -> None:
    tool = ReadSkillTool(skills)
    (skills / "debug" / "SKILL.md").write_text("updated\n")
    assert read(tool, "debug").output == "updated\n"


def test_a_long_skill_is_cut_to_max_output_and_says_so(skills: Path) -> None:
    (skills / "long.md").write_text("x" * 100)
    result = read(ReadSkillTool(skills), "long", max_output=40)
    assert result.output == "x" * 40 + "\n[output truncated: 60 more characters not shown]"


def test_a_missing_name_is_named_to_the_model(skills: Path) -> None:
    result = ReadSkillTool(skills).run({}, ToolContext(cwd=Path("/")))
    assert result.output == '[error: read_skill needs "name" (a string)]'
    assert read(ReadSkillTool(skills), 3).output == '[error: read_skill needs "name" (a string)]'


def test_a_description_from_front_matter_that_yaml_cannot_read_is_still_found(
    tmp_path: Path,
) -> None:
    (tmp_path / "odd.md").write_text(
        "---\ndescription: uses: colons: everywhere\n[broken\n---\nx\n"
    )
    tool = ReadSkillTool(tmp_path)
    assert tool.description.endswith("\n  odd — uses: colons: everywhere")


def test_the_title_names_the_skill() -> None:
    assert ReadSkillTool(Path("/nowhere")).title({"name": "../debug"}) == "read_skill debug"


def test_the_registry_declares_every_built_in_tool_when_skills_exist(
    tmp_path: Path, skills: Path
) -> None:
    registry = build_registry(Config(lsp_servers=()), tmp_path)
    names = registry.names()
    for name in ("bash", "read_file", "write_file", "edit_file", "read_skill"):
        assert name in names
    registry.close()


def test_ten_thousand_skills_cost_a_bounded_description_that_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    from mm_tui.agent.tools.read_skill import CATALOGUE_BUDGET

    folder = tmp_path / "skills"
    folder.mkdir()
    for number in range(10_000):
        text = f"# Skill {number:05d}: " + "how to do one particular thing well " * 2 + "\n"
        (folder / f"skill-{number:05d}.md").write_text(text)
    tool = ReadSkillTool(folder)

    description = tool.description
    assert len(description) <= len(DESCRIPTION_SENTENCE) + CATALOGUE_BUDGET + 200
    listed = description.count("\n  skill-")
    assert 10 < listed < 10_000
    assert description.endswith(
        f"… and {10_000 - listed} more skills not listed here: call read_skill with a name; "
        "an unknown name answers with the names that exist"
    )
    assert read(tool, "skill-09999").output.startswith("# Skill 09999")
    unknown = read(tool, "nope").output
    assert len(unknown) <= CATALOGUE_BUDGET + 200 and unknown.endswith(" more")
