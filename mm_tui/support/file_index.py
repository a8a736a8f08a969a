"""The project's files for `@` mentions: listed once, `.gitignore` honoured, matched fuzzily.

A person typing `@gre` expects `src/greeter.py` at the top, and never `node_modules/` or a
build folder the project ignores; `pathspec` reads the ignore files as git does (nested ones
apply below their folder). The walk is bounded so a home directory cannot stall the window.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import pathspec

log = logging.getLogger(__name__)

MAX_FILES = 20_000  # files listed at most; a larger tree is cut (and says so)
ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".mypy_cache", ".venv"})


@dataclass(frozen=True)
class FileMatch:
    """A path (relative, `/`-separated) and how well it matched: higher is better."""

    path: str
    score: int


class FileIndex:
    """Every file of the project below `root`, relative paths with `/`."""

    def __init__(self, root: Path, *, max_files: int = MAX_FILES) -> None:
        self.root = root
        self.max_files = max_files
        self.truncated = False
        self.paths: list[str] = sorted(self._walk())

    def _walk(self) -> list[str]:
        found: list[str] = []
        # Each directory's ignore rules, as (directory prefix, spec), applied to paths below it.
        rules: list[tuple[str, pathspec.GitIgnoreSpec]] = []
        for directory, dirnames, filenames in os.walk(self.root):
            rel_dir = os.path.relpath(directory, self.root)
            prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            spec = _read_ignore_file(Path(directory) / ".gitignore")
            if spec is not None:
                rules.append((prefix, spec))
            kept_dirs = []
            for name in sorted(dirnames):
                rel = f"{prefix}{name}/"
                if name in ALWAYS_SKIPPED or _ignored(rel, rules):
                    continue
                kept_dirs.append(name)
            dirnames[:] = kept_dirs
            for name in sorted(filenames):
                rel = f"{prefix}{name}"
                if _ignored(rel, rules):
                    continue
                found.append(rel)
                if len(found) >= self.max_files:
                    self.truncated = True
                    return found
        return found

    def search(self, query: str, limit: int = 50) -> list[FileMatch]:
        """The paths holding the query's characters in order, best first (shortest on a tie)."""
        if not query:
            return [FileMatch(path, 0) for path in self.paths[:limit]]
        matches = []
        for path in self.paths:
            score = fuzzy_score(query, path)
            if score is not None:
                matches.append(FileMatch(path, score))
        matches.sort(key=lambda match: (-match.score, len(match.path), match.path))
        return matches[:limit]


def fuzzy_score(query: str, path: str) -> int | None:
    """None unless every character of `query` appears in `path` in order (case-insensitive).

    Rewards a match in the file name, at a word start, and consecutive characters, as the
    pickers of editors do; a plain substring of the name beats everything.
    """
    needle, hay = query.lower(), path.lower()
    name_start = hay.rfind("/") + 1
    score = 0
    position = 0
    previous = -2
    for char in needle:
        found = hay.find(char, position)
        if found < 0:
            return None
        if found == previous + 1:
            score += 5
        if found == 0 or hay[found - 1] in "/._-":
            score += 3
        if found >= name_start:
            score += 2
        previous = found
        position = found + 1
    if needle in hay[name_start:]:
        score += 20 + (10 if hay[name_start:].startswith(needle) else 0)
    return score


def _read_ignore_file(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except Exception:  # a malformed pattern must not hide the whole project
        log.debug("unreadable ignore file %s", path, exc_info=True)
        return None


def _ignored(rel: str, rules: list[tuple[str, pathspec.GitIgnoreSpec]]) -> bool:
    """Whether the last applicable rule set ignores `rel` (a directory ends with `/`)."""
    ignored = False
    for prefix, spec in rules:
        if not rel.startswith(prefix):
            continue
        result = spec.check_file(rel[len(prefix) :])
        if result.include is not None:
            ignored = result.include
    return ignored
