"""rust-analyzer's loading answers are asked again within the bound.

rust-analyzer is not installable from PyPI, npm or Debian 12 (checked: `pip download
rust-analyzer`, `npm view rust-analyzer`, `apt-cache policy rust-analyzer` find nothing;
rustup's proxy is there but not the component, and rustup cannot download it here), so
fixtures/rust_analyzer_replay.py replays its real loading messages: ContentModified errors
("waiting for cargo metadata or cargo check", "content modified") and null answers while its
VFS loads under a "Roots Scanned" progress. Each action must end with the loaded answer.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of

LIBRARY = '/// greet returns a greeting for name.\npub fn greet(name: &str) -> String {\n    format!("hello {name}")\n}\n'
MAIN = (
    "use greetings::greet;\n\nfn main() {\n"
    '    let banner = "café 🎉 ".to_owned() + &greet("world");\n'
    '    println!("{banner} {}", greet("again"));\n}\n'
)
GREET = re.compile(r"\bgreet\b")
MODES = [("waiting", 3), ("modified", 1), ("loading", 0.3)]


@pytest.fixture(params=MODES, ids=lambda mode: f"{mode[0]}-{mode[1]}")
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[LspWorkspace]:
    mode, count = request.param
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "greetings"\nversion = "0.1.0"\n')
    (tmp_path / "src" / "lib.rs").write_text(LIBRARY)
    (tmp_path / "src" / "main.rs").write_text(MAIN)
    command = (sys.executable, str(FIXTURES / "rust_analyzer_replay.py"), mode, str(count))
    spec = LspServerSpec(name="rust-analyzer", command=command, extensions=(".rs",))
    started = LspWorkspace([spec], tmp_path)
    yield started
    started.close()


def ask(workspace: LspWorkspace, action: str, path: str, **fields: str | int) -> str:
    return text_of(workspace.execute(LspQuery(action, path, **fields)))  # type: ignore[arg-type]


def test_definition_after_the_accent_and_emoji_is_the_loaded_answer(
    workspace: LspWorkspace,
) -> None:
    answer = ask(workspace, "definition", "src/main.rs", symbol="greet", line=4)
    assert answer == "src/lib.rs:2:8  pub fn greet(name: &str) -> String {"


def test_references_are_the_loaded_answer(workspace: LspWorkspace) -> None:
    assert ask(workspace, "references", "src/lib.rs", symbol="greet").splitlines() == [
        "5 reference(s):",
        "src/lib.rs:1:5  /// greet returns a greeting for name.",
        "src/lib.rs:2:8  pub fn greet(name: &str) -> String {",
        "src/main.rs:1:16  use greetings::greet;",
        'src/main.rs:4:42  let banner = "café 🎉 ".to_owned() + &greet("world");',
        'src/main.rs:5:29  println!("{banner} {}", greet("again"));',
    ]


def test_hover_is_the_loaded_answer(workspace: LspWorkspace) -> None:
    answer = ask(workspace, "hover", "src/main.rs", symbol="greet", line=5)
    assert "pub fn greet(name: &str) -> String" in answer


def test_symbols_are_the_loaded_answer(workspace: LspWorkspace) -> None:
    assert ask(workspace, "symbols", "src/lib.rs") == "function greet  [fn(&str) -> String]  line 2"


def test_rename_is_the_loaded_answer_on_disk(workspace: LspWorkspace) -> None:
    answer = ask(workspace, "rename", "src/lib.rs", symbol="greet", new_name="salute")
    assert answer.splitlines() == [
        "renamed to salute: 5 edit(s) in 2 file(s)",
        "src/lib.rs: 2 edit(s)",
        "src/main.rs: 3 edit(s)",
    ]
    assert (workspace.root / "src" / "main.rs").read_text() == GREET.sub("salute", MAIN)
    assert (workspace.root / "src" / "lib.rs").read_text() == GREET.sub("salute", LIBRARY)


def test_a_workspace_it_cannot_load_is_said_once_in_its_own_words(tmp_path: Path) -> None:
    # Without rust-src it answers nothing, ever; "no definition found" alone invites the
    # model to call again and again. Its own error goes with the answer, once, named.
    (tmp_path / "src").mkdir()
    (tmp_path / "Cargo.toml").write_text('[package]\nname = "greetings"\nversion = "0.1.0"\n')
    (tmp_path / "src" / "lib.rs").write_text(LIBRARY)
    (tmp_path / "src" / "main.rs").write_text(MAIN)
    command = (sys.executable, str(FIXTURES / "rust_analyzer_replay.py"), "unloadable", "0")
    spec = LspServerSpec(name="rust-analyzer", command=command, extensions=(".rs",))
    workspace = LspWorkspace([spec], tmp_path)
    try:
        first = ask(workspace, "definition", "src/main.rs", symbol="greet", line=4)
        second = ask(workspace, "hover", "src/main.rs", symbol="greet", line=4)
    finally:
        workspace.close()
    assert first.splitlines() == [
        "[lsp: no definition found for the symbol at src/main.rs:4:42]",
        "[lsp: rust-analyzer said: rust-analyzer failed to load workspace: see the logs]",
        "[lsp: rust-analyzer said: rust-analyzer failed to load workspace: Failed to load the "
        f"project at {workspace.root}/Cargo.toml: can't load standard library from sysroot: "
        "is rust-src installed?]",
    ]
    assert second == "[lsp: no hover information for the symbol at src/main.rs:4:42]"
