"""`/permissions` in the window: the config's rules with the file each comes from,
the session's grants, and revoking grants. Configs are real files loaded as the CLI loads
them; the model is the scripted server over HTTP; bash is real."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.config import Config, load_config
from mm_tui.app import MMApp
from mm_tui.widgets.pickers import GrantsScreen
from mm_tui.window.ports import live_factory
from scripted_server import Reply, ToolCall
from tests.window.conftest import agent_of, answer, send, wait_for

pytestmark = pytest.mark.anyio

RULES = (
    "permissions:\n"
    "  allow: ['bash(git *)', 'bash(true)']\n"
    "  ask: ['bash(git push *)']\n"
    "  deny: ['bash(rm *)', 'read_file(~/.ssh/**)']\n"
)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


def user_config(env: dict[str, str], text: str) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "mm/config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def window(config: Config, project: Path, tmp_path: Path) -> MMApp:
    """The window as `mm-tui` opens it: the real Agent built by the live factory."""
    return MMApp(
        config,
        project,
        agent_factory=live_factory(config, project),
        history_path=tmp_path / "history.jsonl",
    )


def loaded(project: Path, env: dict[str, str], model_server: Any) -> Config:
    overrides = {"base_url": model_server.base_url, "model": "scripted-model"}
    return load_config(cwd=project, env=env, overrides=overrides)


async def open_permissions(pilot: Any) -> GrantsScreen:
    app = pilot.app
    await send(pilot, "/permissions")
    await wait_for(pilot, lambda: isinstance(app.screen, GrantsScreen), "the grants screen")
    assert isinstance(app.screen, GrantsScreen)
    return app.screen


async def test_permissions_lists_the_rules_with_their_file_and_the_grants_and_revokes(
    model_server: Any, project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    source = user_config(env, RULES + "lsp: {servers: {}}\n")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo hi"})]), Reply(text="ok")
    )
    app = window(loaded(project, env, model_server), project, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "say hi")
        await answer(pilot, "s")
        await wait_for(pilot, lambda: not app.turns.running, "the turn ends")
        screen = await open_permissions(pilot)
        rules = str(screen.query_one("#rules").render())
        assert rules.splitlines() == [
            f"Rules from {source} (deny wins, then ask, then allow):",
            "  deny  bash(rm *)",
            "  deny  read_file(~/.ssh/**)",
            "  ask   bash(git push *)",
            "  allow bash(git *)",
            "  allow bash(true)",
        ]
        assert screen.grants == {"bash(echo *)"}
        await pilot.press("enter", "escape")
        await wait_for(pilot, lambda: not agent_of(app).permission_state().grants, "revoked")


async def test_an_untrusted_projects_rules_are_not_listed_the_users_own_are(
    model_server: Any, project: Path, tmp_path: Path, env: dict[str, str]
) -> None:
    source = user_config(env, "permissions: {deny: ['bash(rm *)']}\nlsp: {servers: {}}\n")
    (project / ".mm.yaml").write_text("permissions: {allow: ['bash(*)']}\n")
    app = window(loaded(project, env, model_server), project, tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        screen = await open_permissions(pilot)
        rules = str(screen.query_one("#rules").render())
        assert rules.splitlines() == [
            f"Rules from {source} (deny wins, then ask, then allow):",
            "  deny  bash(rm *)",
        ]


async def test_with_no_rules_permissions_says_how_to_write_them(
    model_server: Any, live_app: Any
) -> None:
    app = live_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        screen = await open_permissions(pilot)
        assert str(screen.query_one("#rules").render()) == (
            "No rules in the config (permissions: {allow: [...], ask: [...], deny: [...]})."
        )
