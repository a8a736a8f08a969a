"""Secrets stay out of commands: bash and language servers never get the API key,
tokens or secrets in their environment, by name or by value."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import BashTool
from mm_tui.agent.tools.registry import build_registry
from mm_tui.lsp.connection import ServerConnection, Timeouts
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.support import secret_env

SECRETS = {
    "OPENAI_API_KEY": "sk-openai-0123456789",
    "GITHUB_TOKEN": "ghp_0123456789abcdef",
    "AWS_SECRET": "aws-secret-0123456789",
    "DB_PASSWORD": "hunter2hunter2",
    "MY_ODD_NAME": "sk-configured-key-0123456789",  # the configured key, under any name
    "COMPANY_CREDENTIALS": "corp-0123456789",  # scrubbed by the config's scrubEnv
}


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(secret_env, "_patterns", list(secret_env.DEFAULT_PATTERNS))
    monkeypatch.setattr(secret_env, "_values", set())
    config = Config(
        api_key="sk-configured-key-0123456789",
        scrub_env=("*_CREDENTIALS",),
        lsp_servers=(),
        edit_tools=False,
    )
    build_registry(config, tmp_path).close()


def test_bash_never_sees_a_secret(secrets: None, tmp_path: Path) -> None:
    result = BashTool().run({"command": "env"}, ToolContext(cwd=tmp_path))
    for value in SECRETS.values():
        assert value not in result.output
    assert "PATH=" in result.output and "PAGER=cat" in result.output


def test_a_language_server_never_sees_a_secret(
    secrets: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    def spawn(*args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise OSError(2, "stop here")

    monkeypatch.setattr(subprocess, "Popen", spawn)
    spec = LspServerSpec("fake", ("fake-server",), (".py",))
    connection = ServerConnection(spec, tmp_path, Timeouts())
    with pytest.raises(Exception, match="cannot run fake-server"):
        connection.start()
    environment = seen["env"]
    assert "PATH" in environment
    assert not set(SECRETS) & set(environment)
