"""No comment, docstring or name in the code points at an issue by its number.

The project's issues are not in the repository: a reader of "(issue N)" cannot open what it
meant. Say the behaviour or the reason in words, or link a decision record (docs/decisions/)
or a section of docs/SPEC.md, docs/ARCHITECTURE.md or docs/GLOSSARY.md. Another project's
issue stays citable by its address (`owner/repo#123` or a URL), which this does not match.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Where code lives: every Python file below these, the window's stylesheets, the CI scripts.
CODE_DIRS = ("mm_tui", "tests", "bench")
CI_SCRIPTS = (".ci/run", ".ci/install-test-tools")
#: The word, then a number: "(issue N)", "Issues N, M", `test_issue_N`, "issue #N", "issue-N".
ISSUE_CITATION = re.compile(r"(?<![a-z])issues?[ _-]+#?\d+", re.IGNORECASE)


def _code_files() -> list[Path]:
    files = [
        path
        for folder in CODE_DIRS
        for pattern in ("*.py", "*.tcss")
        for path in (ROOT / folder).rglob(pattern)
        if ".venv" not in path.parts and "node_modules" not in path.parts
    ]
    return sorted(files + [ROOT / script for script in CI_SCRIPTS if (ROOT / script).is_file()])


def citations(text: str) -> list[tuple[int, str]]:
    """(line number, the line) of every issue-number citation in `text`."""
    return [
        (number, line.strip())
        for number, line in enumerate(text.splitlines(), start=1)
        if ISSUE_CITATION.search(line)
    ]


def test_the_pattern_finds_each_way_of_citing_an_issue_and_nothing_else() -> None:
    word = "issue"  # the examples are built, so that this file cites nothing itself
    cited = (
        f"# ({word} 12)\n{word.title()}s 14, 15.\ndef test_{word}_13(): ...\n"
        f"# {word} #7, {word}-6\n"
    )
    assert [number for number, _ in citations(cited)] == [1, 2, 3, 4]
    kept = "# ollama/ollama#17602\n# TestLagunaIssue17602\n# the issue is 3 bytes long\n"
    assert citations(kept) == []


def test_no_code_test_or_bench_file_cites_an_issue_number() -> None:
    files = _code_files()
    assert len(files) > 100, "the scan found too few files: is ROOT right?"
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line}"
        for path in files
        for number, line in citations(path.read_text(encoding="utf-8", errors="replace"))
    ]
    assert not found, (
        "issue numbers point at texts nobody here can open; say what is meant in words or link "
        "docs/decisions/ or a section of docs/SPEC.md:\n" + "\n".join(found)
    )
