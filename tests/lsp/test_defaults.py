"""The built-in servers, the one-server-per-extension rule, and where a server runs."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from mm_tui.lsp.defaults import (
    BASEDPYRIGHT,
    PYLSP,
    check_servers,
    default_servers,
    find_server_root,
    language_id,
)
from mm_tui.lsp.server_requests import settings_section
from mm_tui.lsp.spec import LspServerSpec


def test_the_defaults_cover_the_languages_of_the_spec_with_one_python_server() -> None:
    names = [spec.name for spec in default_servers()]
    assert names[1:] == ["gopls", "typescript-language-server", "clangd", "rust-analyzer"]
    assert names[0] in ("basedpyright", "pylsp")
    assert check_servers(default_servers()) is None


def test_basedpyright_is_preferred_when_on_the_path_else_pylsp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts = Path(sys.executable).parent
    only_pylsp = tmp_path / "bin"
    only_pylsp.mkdir()
    os.symlink(scripts / "pylsp", only_pylsp / "pylsp")
    monkeypatch.setenv("PATH", str(only_pylsp))
    assert default_servers()[0] == PYLSP
    monkeypatch.setenv("PATH", str(scripts))
    assert default_servers()[0] == BASEDPYRIGHT


def test_two_servers_on_one_extension_are_a_configuration_error() -> None:
    other = LspServerSpec(name="jedi", command=("jedi-language-server",), extensions=(".PY",))
    assert check_servers([PYLSP, other]) == (
        'lsp servers "pylsp" and "jedi" both claim the extension ".PY" — '
        "one extension may have only one server"
    )


def test_a_server_runs_in_the_nearest_folder_with_its_root_marker(tmp_path: Path) -> None:
    service = tmp_path / "services" / "api"
    (service / "src").mkdir(parents=True)
    (service / "go.mod").write_text("module api\n")
    markers = ("go.mod",)
    assert find_server_root(service / "src" / "main.go", tmp_path, markers) == service
    assert find_server_root(tmp_path / "tool.go", tmp_path, markers) == tmp_path
    assert find_server_root(service / "src" / "main.go", tmp_path, ()) == tmp_path
    assert find_server_root(Path("/elsewhere/x.go"), tmp_path, markers) == tmp_path


def test_language_ids_follow_the_extension() -> None:
    assert language_id(Path("a.py")) == "python"
    assert language_id(Path("a.tsx")) == "typescriptreact"
    assert language_id(Path("a.zig")) == "zig"


def test_workspace_configuration_answers_each_section_from_the_settings() -> None:
    settings = {"basedpyright": {"analysis": {"typeCheckingMode": "standard"}}}
    assert settings_section(settings, "basedpyright.analysis") == {"typeCheckingMode": "standard"}
    assert settings_section(settings, "python") is None
    assert settings_section(settings, None) == settings
