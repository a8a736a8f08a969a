"""A password in the base URL (`http://user:secret@host/v1`) is never printed or stored: not
in an error line, the top line, the session file, the debug log or the doctor's report."""

from __future__ import annotations

import logging
import socket
from pathlib import Path

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.events import Notice
from mm_tui.agent.server_check import check_server
from mm_tui.support import debug_log
from mm_tui.support.url_text import shown_url
from scripted_server import Reply, ScriptedServer
from tests.agent.conftest import AgentFactory

PASSWORD = "hunter2-base-url-password"


def with_password(url: str) -> str:
    return url.replace("http://", f"http://alice:{PASSWORD}@", 1)


def a_closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_a_url_is_shown_with_its_password_hidden() -> None:
    assert shown_url("http://alice:s3cret@host:8080/v1") == "http://alice:***@host:8080/v1"
    assert shown_url("http://token@host/v1") == "http://***@host/v1"
    assert shown_url("http://host/v1") == "http://host/v1"


def test_the_password_is_in_no_error_line_session_file_or_log(
    make_agent: AgentFactory,
    model_server: ScriptedServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    log_path = tmp_path / "debug.log"
    handler_count = len(logging.getLogger(debug_log.ROOT_LOGGER).handlers)
    debug_log.enable_debug_log(log_path)
    try:
        model_server.enqueue(Reply(text="Hello."))
        agent, _ = make_agent(base_url=with_password(model_server.base_url))
        logging.getLogger("mm_tui.test").debug("config: %r", agent.config)
        agent.run_turn("hi")
        top = agent.top_line().server
        saved = agent.session_path.read_text()
        broken, events = make_agent(base_url=with_password(a_closed_port_url()))
        ended = broken.run_turn("hi")
        errors = [n.text for n in events.of(Notice) if n.level == "error"]
    finally:
        root = logging.getLogger(debug_log.ROOT_LOGGER)
        for handler in root.handlers[handler_count:]:
            root.removeHandler(handler)
            handler.close()
    assert ended.reason == "error" and errors
    assert "alice:***@" in top and "alice:***@" in saved and "alice:***@" in errors[0]
    for text in (top, saved, *errors, broken.session_path.read_text(), log_path.read_text()):
        assert PASSWORD not in text


def test_the_doctor_never_prints_the_password() -> None:
    report = check_server(Config(base_url=with_password(a_closed_port_url())), timeout=2.0)
    lines = [finding.text for finding in report.findings]
    assert lines and not any(PASSWORD in line for line in lines)
