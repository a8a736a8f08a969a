"""The tools a configuration declares (SPEC §4), and what the start banner says."""

from __future__ import annotations

from pathlib import Path

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.tools.registry import build_registry
from mm_tui.lsp.spec import LspServerSpec


@pytest.fixture
def no_servers_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_the_defaults_declare_bash_and_the_file_tools(tmp_path: Path) -> None:
    registry = build_registry(Config(), tmp_path)
    assert registry.names()[:4] == ["bash", "read_file", "write_file", "edit_file"]
    assert "read_skill" not in registry.names()  # no skill exists


def test_switches_remove_tools_and_skills_add_one(tmp_path: Path) -> None:
    (tmp_path / ".mm/skills/review").mkdir(parents=True)
    (tmp_path / ".mm/skills/review/SKILL.md").write_text("How to review a change.\n")
    registry = build_registry(Config(bash_tool=False, edit_tools=False), tmp_path)
    assert "bash" not in registry.names() and "edit_file" not in registry.names()
    assert "read_skill" in registry.names()
    assert "  review — How to review a change." in registry.get("read_skill").description


def test_without_any_default_server_the_banner_says_the_lsp_tool_is_off(
    tmp_path: Path, no_servers_on_path: None
) -> None:
    registry = build_registry(Config(), tmp_path)
    assert "lsp" not in registry.names()
    [notice] = registry.notices
    assert notice.startswith("[warning: no known language server (")
    assert notice.endswith("was found on the PATH — the lsp tool is off]")


def test_a_configured_server_missing_is_skipped_with_its_warning(
    tmp_path: Path, no_servers_on_path: None
) -> None:
    spec = LspServerSpec(name="gopls", command=("gopls", "serve"), extensions=(".go",))
    registry = build_registry(Config(lsp_servers=(spec,)), tmp_path)
    assert "lsp" not in registry.names()
    assert registry.notices[0] == (
        "[warning: lsp server gopls (gopls) not found on the PATH — skipped]"
    )
    assert registry.notices[1] == (
        "[warning: no configured language server (gopls) was found on the PATH — "
        "the lsp tool is off]"
    )


def test_a_found_server_declares_the_lsp_tool(tmp_path: Path) -> None:
    import sys

    spec = LspServerSpec(name="python", command=(sys.executable,), extensions=(".py",))
    registry = build_registry(Config(lsp_servers=(spec,)), tmp_path)
    assert "lsp" in registry.names() and registry.notices == []
    assert "python (.py)" in registry.get("lsp").description
    registry.close()
