"""The support room's helpers: XDG paths, the debug log, ending a process group."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mm_tui.support import debug_log
from mm_tui.support.paths import config_dir, data_dir, state_dir
from mm_tui.support.process_group import end_group_sync, group_alive
from tests.waiting import wait_until


def test_xdg_variables_win_over_home() -> None:
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "/d", "XDG_STATE_HOME": "/s"}
    assert data_dir(env) == Path("/d/mm")
    assert state_dir(env) == Path("/s/mm")
    assert config_dir(env) == Path("/home/ann/.config/mm")


def test_empty_xdg_variables_fall_back_to_the_home_defaults() -> None:
    env = {"HOME": "/home/ann", "XDG_DATA_HOME": "", "XDG_CONFIG_HOME": ""}
    assert data_dir(env) == Path("/home/ann/.local/share/mm")
    assert config_dir(env) == Path("/home/ann/.config/mm")
    assert state_dir(env) == Path("/home/ann/.local/state/mm")


@pytest.mark.parametrize(
    ("flag", "value", "wanted"),
    [
        (False, "", False),
        (False, "0", False),
        (False, "no", False),
        (False, "false", False),
        (False, "1", True),
        (False, "yes", True),
        (True, "", True),
    ],
)
def test_the_debug_log_is_asked_for_by_flag_or_mm_debug(
    flag: bool, value: str, wanted: bool
) -> None:
    assert debug_log.debug_requested(flag, {"MM_DEBUG": value}) is wanted


def _run_python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )


def test_with_the_log_off_nothing_reaches_the_terminal(tmp_path: Path) -> None:
    code = (
        "import logging, mm_tui.support.debug_log\n"
        "log = logging.getLogger('mm_tui.agent.x')\n"
        "try:\n    1/0\nexcept Exception:\n    log.exception('swallowed')\n"
        "log.error('an error nobody asked to see')\n"
    )
    result = _run_python(code, {**os.environ, "XDG_STATE_HOME": str(tmp_path)})
    assert result.returncode == 0
    assert result.stdout == "" and result.stderr == ""
    assert not (tmp_path / "mm").exists()


def test_the_debug_log_keeps_a_swallowed_exception_with_its_traceback(tmp_path: Path) -> None:
    code = (
        "import logging\n"
        "from mm_tui.support.debug_log import enable_debug_log\n"
        "print(enable_debug_log())\n"
        "log = logging.getLogger('mm_tui.agent.x')\n"
        "try:\n    {}['missing']\nexcept Exception:\n    log.debug('swallowed', exc_info=True)\n"
    )
    result = _run_python(code, {**os.environ, "XDG_STATE_HOME": str(tmp_path)})
    path = Path(result.stdout.strip())
    assert path == tmp_path / "mm" / "debug.log"
    text = path.read_text(encoding="utf-8")
    assert "mm_tui.agent.x: swallowed" in text
    assert "Traceback (most recent call last)" in text and "KeyError: 'missing'" in text
    assert os.stat(path).st_mode & 0o777 == 0o600


def test_mm_tui_debug_says_where_the_log_is(tmp_path: Path) -> None:
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "mm_tui.cli", "--debug", "--config", str(tmp_path / "nope.yaml")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert f"mm-tui: debug log: {tmp_path / 'mm' / 'debug.log'}" in result.stderr
    assert (tmp_path / "mm" / "debug.log").exists()


def test_ending_a_group_ends_a_detached_grandchild_too() -> None:
    process = subprocess.Popen(
        ["bash", "-c", "sleep 60 & sleep 60 & wait"],
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    children = lambda: _children_of(process.pid)  # noqa: E731
    wait_until(children, "two children", until=lambda c: len(c) >= 2, timeout=10, interval=0.02)
    assert len(_children_of(process.pid)) == 2
    end_group_sync(process, grace=0.5)
    assert process.returncode is not None
    assert not group_alive(process.pid)


def _children_of(pid: int) -> list[str]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return path.read_text().split() if path.exists() else []
