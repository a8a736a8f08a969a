"""`read_skill`: the markdown of one skill from `skillsDir` (SPEC §4).

A skill is `<name>.md` or `<name>/SKILL.md`; the flat file wins when both exist. The tool is
declared only when at least one skill exists, and its description lists them, so the
model knows what it may ask for without a call: as many as fit in `CATALOGUE_BUDGET`
characters (it goes with every request), then one line saying how many were left out. Only the base name of `name` is used: a
model cannot read `../../secrets` through this tool.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mm_tui.agent.events import ToolStatus
from mm_tui.agent.tools.arguments import (
    ArgumentProblem,
    argument_map,
    lenient_string,
    string_field,
)
from mm_tui.agent.tools.base import Tool, ToolContext, ToolKind, ToolResult, truncate_output
from mm_tui.agent.tools.file_text import displayable
from mm_tui.support.terminal_text import quoted

NAME = "read_skill"
SKILL_FILE = "SKILL.md"
DESCRIPTION_SENTENCE = (
    "Read a skill: instructions for a kind of task, written for this project. When the "
    "task matches a skill below, read it first and follow it. "
    'Example: {"name": "<one of the names below>"}. Skills:'
)
CATALOGUE_LINE = "  {name} — {description}"
UNKNOWN_SKILL = 'No skill named "{name}". Available skills: {names}'
CANNOT_READ = "[error: cannot read skill {name}: {reason}]"
MAX_DESCRIPTION_CHARACTERS = 200
#: The catalogue's budget in characters (about 2,000 tokens): it travels with every request.
CATALOGUE_BUDGET = 8_000
LEFT_OUT = (
    "… and {count} more skills not listed here: call read_skill with a name; "
    "an unknown name answers with the names that exist"
)

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "A skill name exactly as listed."},
    },
    "required": ["name"],
}


def find_skills(skills_dir: Path) -> dict[str, Path]:
    """Every skill in `skills_dir` by name, sorted; the flat `<name>.md` before `SKILL.md`."""
    found: dict[str, Path] = {}
    try:
        entries = list(os.scandir(skills_dir))
    except OSError:
        return {}
    for entry in entries:
        if entry.name.endswith(".md") and entry.is_file() and len(entry.name) > 3:
            found[entry.name[:-3]] = Path(entry.path)
    for entry in entries:
        nested = Path(entry.path) / SKILL_FILE
        if entry.name not in found and entry.is_dir() and nested.is_file():
            found[entry.name] = nested
    return dict(sorted(found.items()))


def skill_description(markdown: str) -> str:
    """The front matter's `description`, else the first non-empty line (a heading's `#`
    removed), on one line."""
    body = markdown
    if markdown.startswith("---"):
        front, separator, rest = markdown[3:].partition("\n---")
        if separator:
            body = rest.partition("\n")[2]
            description = _front_matter_description(front)
            if description:
                return _one_line(description)
    for line in body.splitlines():
        if line.strip():
            return _one_line(line.strip().lstrip("#").strip())
    return ""


def _front_matter_description(front: str) -> str:
    """`description:` of YAML front matter; a malformed block is read line by line."""
    import yaml  # only when a skill has front matter: keeps start-up light

    try:
        data = yaml.safe_load(front)
    except yaml.YAMLError:
        data = None
    if isinstance(data, dict):
        value = data.get("description")
        return value if isinstance(value, str) else ""
    for line in front.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() == "description":
            return value.strip().strip("\"'")
    return ""


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) > MAX_DESCRIPTION_CHARACTERS:
        return flat[: MAX_DESCRIPTION_CHARACTERS - 1].rstrip() + "…"
    return flat


def _read_text(path: Path) -> str:
    return displayable(path.read_bytes().decode("utf-8", errors="replace"))


class ReadSkillTool(Tool):
    """Serves skills from `skills_dir`, re-reading the file on every call."""

    name = NAME
    kind = ToolKind.SKILL

    def __init__(self, skills_dir: Path) -> None:
        self.skills_dir = skills_dir
        self.catalogue = self._catalogue()

    @classmethod
    def discover(cls, skills_dir: Path) -> ReadSkillTool | None:
        """The tool when `skills_dir` holds at least one skill, else None (not declared)."""
        return cls(skills_dir) if find_skills(skills_dir) else None

    def _catalogue(self) -> list[tuple[str, str]]:
        entries: list[tuple[str, str]] = []
        for name, path in find_skills(self.skills_dir).items():
            try:
                description = skill_description(_read_text(path))
            except OSError:
                description = ""
            entries.append((name, description))
        return entries

    @property
    def description(self) -> str:
        lines = [
            CATALOGUE_LINE.format(name=name, description=description).rstrip(" —")
            for name, description in self.catalogue
        ]
        kept, left_out = within_budget(lines, CATALOGUE_BUDGET)
        if left_out:
            kept.append("  " + LEFT_OUT.format(count=left_out))
        return "\n".join([DESCRIPTION_SENTENCE, *kept])

    parameters = PARAMETERS

    def title(self, args: dict[str, Any]) -> str:
        return f"{NAME} {_base_name(lenient_string(args, 'name'))}".rstrip()

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            raw_name = string_field(argument_map(args), NAME, "name")
        except ArgumentProblem as problem:
            return ToolResult(str(problem), ToolStatus.FAILED)
        name = _base_name(raw_name)
        skills = find_skills(self.skills_dir)
        path = skills.get(name)
        if path is None:
            listed, left_out = within_budget(list(skills), CATALOGUE_BUDGET)
            names = ", ".join(listed) or "none"
            if left_out:
                names += f", and {left_out} more"
            return ToolResult(
                UNKNOWN_SKILL.format(name=quoted(name), names=names), ToolStatus.FAILED
            )
        try:
            markdown = _read_text(path)
        except OSError as error:
            reason = error.strerror or str(error)
            return ToolResult(CANNOT_READ.format(name=name, reason=reason), ToolStatus.FAILED)
        return ToolResult(truncate_output(markdown, ctx.max_output))


def within_budget(lines: list[str], budget: int) -> tuple[list[str], int]:
    """The first `lines` that fit in `budget` characters, and how many were left out (so a
    directory of 10,000 skills costs a bounded description, not 800 KB per request)."""
    used = 0
    for index, line in enumerate(lines):
        used += len(line) + 2  # with its separator (", " or a newline)
        if used > budget:
            return lines[:index], len(lines) - index
    return list(lines), 0


def _base_name(raw: str) -> str:
    """Only the last path component, and without `.md`: `../x/deploy.md` means `deploy`."""
    base = os.path.basename(raw.strip().replace("\\", "/").rstrip("/"))
    return base[:-3] if base.endswith(".md") and len(base) > 3 else base
