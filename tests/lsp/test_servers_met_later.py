"""What the servers met after the first twelve showed, each on the real server that showed it.

bash-language-server answers nothing about a file it was just sent, the right answer 150 ms
later, with no progress report; fortls checks a file only when it is opened or saved;
vscode-css-language-server names custom properties with dashes (`--brand-color`), reports no
progress (a one-file answer is its whole answer), checks nothing without its settings and
says why only in its log; pyrefly shows no type error without its config. ruff server only
lints. Every wait below is on a condition, bounded; no test times anything.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mm_tui.lsp.answers import Failed
from mm_tui.lsp.defaults import CSS_LANGUAGE_SERVER, FORTLS, PYREFLY, RUFF
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of
from tests.lsp.real_servers import LANGS, SERVERS, TYPED_PYTHON_ERROR
from tests.waiting import wait_until

BASH = next(server for server in SERVERS if server.name == "bash-language-server")
STYLE = (LANGS / "css" / "style.css").read_text()


def require(spec: LspServerSpec) -> None:
    """As RealServer.require: fail in CI, skip (saying how to install) elsewhere."""
    if shutil.which(spec.command[0]):
        return
    message = f"{spec.command[0]} is not installed: bash .ci/run installs it"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def project(tmp_path: Path, language: str) -> Path:
    target = tmp_path / language
    shutil.copytree(LANGS / language, target)
    return target


def ask(workspace: LspWorkspace, action: str, path: str, **fields: Any) -> str:
    return text_of(workspace.execute(LspQuery(action, path, **fields)))


def recorded(spec: LspServerSpec, log: Path) -> LspServerSpec:
    recorder = (sys.executable, str(FIXTURES / "wire_recorder.py"), str(log))
    return replace(spec, command=(*recorder, *spec.command))


def requests_sent(log: Path, method: str) -> int:
    messages = [json.loads(line) for line in log.read_text().splitlines()]
    return sum(
        1 for m in messages if m["from"] == "client" and m["message"].get("method") == method
    )


# ---- a new server's first answer ---------------------------------------------------------


def test_the_first_definition_asked_of_a_new_or_restarted_server_is_the_right_one(
    tmp_path: Path,
) -> None:
    BASH.require()
    workspace = LspWorkspace([BASH.spec], project(tmp_path, "bash"))
    expected = "greet.sh:4:1  greet() {"
    try:
        # Its first answer about a file just opened is empty; a moment later it is right.
        assert ask(workspace, "definition", "main.sh", symbol="greet", line=4) == expected
        killed = workspace.server_pids()[BASH.name]
        os.killpg(killed, signal.SIGKILL)
        wait_until(
            workspace.server_pids,
            "the killed server is forgotten",
            until=lambda pids: BASH.name not in pids,
            timeout=10,
            interval=0.02,
        )
        assert ask(workspace, "definition", "main.sh", symbol="greet", line=5) == expected
    finally:
        workspace.close()


# ---- diagnostics after an edit -----------------------------------------------------------


def test_diagnostics_after_an_edit_are_about_the_new_text_on_a_server_that_checks_on_open(
    tmp_path: Path,
) -> None:
    require(FORTLS)
    root = project(tmp_path, "fortran")
    (root / "bad.f90").write_text("program bad\n  integer :: x\n  integer :: x\nend program bad\n")
    workspace = LspWorkspace([FORTLS], root)
    try:
        first = ask(workspace, "diagnostics", "bad.f90")
        assert first.splitlines()[1] == 'error bad.f90:3:14 Variable "x" declared twice in scope'
        edit = "printf 'program bad\\n  integer :: x\\n  integer :: y\\n  integer :: y\\nend program bad\\n' > bad.f90"
        subprocess.run(["bash", "-c", edit], cwd=root, check=True)
        second = ask(workspace, "diagnostics", "bad.f90").splitlines()
        assert second == [
            "1 diagnostic(s) in bad.f90:",
            'error bad.f90:4:14 Variable "y" declared twice in scope',
        ]
        subprocess.run(
            ["bash", "-c", "printf 'program bad\\n  integer :: x\\nend program bad\\n' > bad.f90"],
            cwd=root,
            check=True,
        )
        assert ask(workspace, "diagnostics", "bad.f90") == "no diagnostics: bad.f90 is clean"
    finally:
        workspace.close()


# ---- names with dashes -------------------------------------------------------------------


def test_a_css_custom_property_is_one_name_for_every_action(tmp_path: Path) -> None:
    require(CSS_LANGUAGE_SERVER)
    root = project(tmp_path, "css")
    workspace = LspWorkspace([CSS_LANGUAGE_SERVER], root)
    try:
        definition = ask(workspace, "definition", "style.css", symbol="--brand-color", line=7)
        references = ask(workspace, "references", "style.css", symbol="var(--brand-color)")
        renamed = ask(
            workspace, "rename", "style.css", symbol="--brand-color", new_name="--main-color"
        )
    finally:
        workspace.close()
    assert definition == "style.css:2:3  --brand-color: #336699;"
    assert references.splitlines() == [
        "2 reference(s):",
        "style.css:2:3  --brand-color: #336699;",
        "style.css:7:14  color: var(--brand-color);",
    ]
    assert renamed.splitlines()[0] == "renamed to --main-color: 2 edit(s) in 1 file(s)"
    assert (root / "style.css").read_text() == STYLE.replace("--brand-color", "--main-color")


def test_a_name_is_what_the_servers_range_says_in_a_language_without_a_rule(
    tmp_path: Path,
) -> None:
    # PostCSS has no word rule of its own: at a line and column inside `--brand-color`,
    # the common rule sees `brand` or nothing; the server's range is the whole name, and
    # the new name keeps its dashes.
    require(CSS_LANGUAGE_SERVER)
    (tmp_path / "style.pcss").write_text(STYLE)
    spec = replace(CSS_LANGUAGE_SERVER, extensions=(".pcss",))
    workspace = LspWorkspace([spec], tmp_path)
    try:
        renamed = ask(workspace, "rename", "style.pcss", line=7, column=18, new_name="--main-color")
    finally:
        workspace.close()
    assert renamed.splitlines()[0] == "renamed to --main-color: 2 edit(s) in 1 file(s)"
    assert (tmp_path / "style.pcss").read_text() == STYLE.replace("--brand-color", "--main-color")


# ---- progress, not a clock ---------------------------------------------------------------


def test_references_and_rename_on_a_fresh_server_that_reports_no_progress_ask_once(
    tmp_path: Path,
) -> None:
    # A one-file answer from a server just started used to be asked again and again for
    # 10 s, in case it was still loading: this one never reports loading, its answer stands.
    require(CSS_LANGUAGE_SERVER)
    root = project(tmp_path, "css")
    log = tmp_path / "wire.jsonl"
    workspace = LspWorkspace([recorded(CSS_LANGUAGE_SERVER, log)], root)
    try:
        references = ask(workspace, "references", "style.css", symbol="--greet")
        assert requests_sent(log, "textDocument/references") == 1
        renamed = ask(workspace, "rename", "style.css", symbol="--greet", new_name="--gap")
    finally:
        workspace.close()
    assert references.splitlines()[0] == "2 reference(s):"
    assert renamed.splitlines()[0] == "renamed to --gap: 2 edit(s) in 1 file(s)"
    # The rename asks references twice (a young server's readiness, then its check of the
    # edits), once each: no more.
    assert requests_sent(log, "textDocument/references") == 3
    assert requests_sent(log, "textDocument/rename") == 1


# ---- the server's own words; settings ----------------------------------------------------


def test_the_servers_own_error_reaches_the_model_once_and_is_not_called_clean(
    tmp_path: Path,
) -> None:
    require(CSS_LANGUAGE_SERVER)
    root = project(tmp_path, "css")
    (root / "bad.css").write_text("a { colr: red; }\n")
    unset = replace(CSS_LANGUAGE_SERVER, settings={})  # the user's config gave it none
    workspace = LspWorkspace([unset], root)
    try:
        first = ask(workspace, "diagnostics", "bad.css").splitlines()
        definition = ask(workspace, "definition", "style.css", symbol="--greet", line=8)
    finally:
        workspace.close()
    uri = (root / "bad.css").as_uri()
    assert first == [
        "no diagnostics: vscode-css-language-server reported nothing for bad.css, which does "
        "not mean clean — it reported an error instead",
        "[lsp: vscode-css-language-server said: Error while computing diagnostics for "
        f"{uri}: Cannot read properties of null (reading 'validProperties') TypeError: "
        "Cannot read properties of null (reading 'validProperties')]",
    ]
    assert definition == "style.css:3:3  --greet: 4px;"  # said once: not again


@pytest.mark.parametrize(
    ("spec", "language", "file", "text", "finding"),
    [
        (
            CSS_LANGUAGE_SERVER,
            "css",
            "bad.css",
            "a { colr: red; }\n",
            "warning bad.css:1:5 Unknown property: 'colr' [css]",
        ),
        (
            PYREFLY,
            "python",
            "bad.py",
            TYPED_PYTHON_ERROR,
            "error bad.py:3:14 `str` is not assignable to `int` [Pyrefly]",
        ),
    ],
    ids=["vscode-css-language-server", "pyrefly"],
)
def test_a_server_named_without_settings_gets_its_documented_ones_and_checks(
    tmp_path: Path, spec: LspServerSpec, language: str, file: str, text: str, finding: str
) -> None:
    require(spec)
    root = project(tmp_path, language)
    (root / file).write_text(text)
    bare = LspServerSpec(name=spec.name, command=spec.command, extensions=spec.extensions)
    workspace = LspWorkspace([bare], root)
    try:
        lines = ask(workspace, "diagnostics", file).splitlines()
    finally:
        workspace.close()
    assert lines == [f"1 diagnostic(s) in {file}:", finding]


# ---- a server that only lints ------------------------------------------------------------


def test_ruff_server_lints_the_text_on_disk_and_says_what_it_does_not_offer(
    tmp_path: Path,
) -> None:
    require(RUFF)
    root = project(tmp_path, "python")
    (root / "bad.py").write_text("import os\n")
    workspace = LspWorkspace([RUFF], root)
    try:
        first = ask(workspace, "diagnostics", "bad.py")
        (root / "bad.py").write_text("import os\nimport sys\n\nprint(os)\n")
        second = ask(workspace, "diagnostics", "bad.py")
        definition = workspace.execute(LspQuery("definition", "main.py", "greet"))
    finally:
        workspace.close()
    assert first.splitlines()[1].startswith("warning bad.py:1:8 `os` imported but unused")
    assert second.splitlines()[0] == "1 diagnostic(s) in bad.py:"
    assert second.splitlines()[1].startswith("warning bad.py:2:8 `sys` imported but unused")
    assert definition == Failed("[lsp: ruff does not offer definition]")
