"""Starting, restarting and stopping servers: none ever left running (SPEC §4, §6)."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

from mm_tui.lsp.answers import Failed, Interrupted, Text
from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, copy_project, text_of
from tests.processes import our_zombies, process_group_members
from tests.waiting import holds_within, wait_until

GREET_DEFINITION = "greetings.py:5:5  def greet(name: str) -> str:"


def group_ends(group: int) -> None:
    """No process is left in the server's process group; failing, the message lists them."""
    members = lambda: process_group_members(group)  # noqa: E731
    wait_until(
        members, "an empty process group", until=lambda m: m == [], timeout=10, interval=0.02
    )


def silent_spec(pid_file: Path) -> LspServerSpec:
    command = (sys.executable, str(FIXTURES / "silent_server.py"), str(pid_file))
    return LspServerSpec(name="silent", command=command, extensions=(".py",))


def test_a_server_killed_mid_session_is_restarted_on_the_next_call(
    own_workspace: LspWorkspace, server_spec: LspServerSpec
) -> None:
    assert (
        text_of(own_workspace.execute(LspQuery("definition", "app.py", "greet")))
        == GREET_DEFINITION
    )
    first = own_workspace.server_pids()[server_spec.name]
    os.killpg(first, signal.SIGKILL)
    wait_until(
        own_workspace.server_pids,
        "the killed server is forgotten",
        until=lambda pids: server_spec.name not in pids,
        timeout=10,
        interval=0.02,
    )
    answer = own_workspace.execute(LspQuery("definition", "app.py", "greet"))
    assert answer == Text(GREET_DEFINITION)
    assert own_workspace.server_pids()[server_spec.name] != first


def test_closing_leaves_no_server_process_alive(tmp_path: Path, server_spec: LspServerSpec) -> None:
    # A generous wait after `exit`, so that a busy machine never turns the polite stop into
    # a signal: this test proves the polite way works, whatever the time it takes.
    patient = Timeouts(exit_wait=10.0)
    workspace = LspWorkspace([server_spec], copy_project(tmp_path), patient)
    workspace.execute(LspQuery("hover", "app.py", "greet"))
    group = workspace.server_pids()[server_spec.name]
    assert process_group_members(group)
    ended = workspace.close()
    assert process_group_members(group) == []
    assert ended == {server_spec.name: 0}  # it exited by itself on `exit`, after `shutdown`
    assert text_of(workspace.execute(LspQuery("hover", "app.py", "greet"))) == (
        "[lsp: the language servers were stopped]"
    )


def test_references_find_uses_in_files_the_server_never_opened(
    own_workspace: LspWorkspace,
) -> None:
    # The first call of a fresh server: app.py was never sent; the server must index it.
    answer = text_of(own_workspace.execute(LspQuery("references", "greetings.py", "greet")))
    assert answer.splitlines()[:3] == [
        "4 reference(s):",
        "app.py:1:31  from greetings import Person, greet",
        'app.py:3:24  banner = "🎉✨ party " + greet("world")',
    ]


def test_a_server_missing_from_the_path_fails_the_call_in_words(tmp_path: Path) -> None:
    ghost = LspServerSpec(name="ghost", command=("mm-tui-no-such-server",), extensions=(".py",))
    workspace = LspWorkspace([ghost], copy_project(tmp_path))
    try:
        answer = workspace.execute(LspQuery("symbols", "app.py"))
    finally:
        workspace.close()
    assert answer == Failed(
        "[lsp: ghost: could not start: cannot run mm-tui-no-such-server: No such file or directory]"
    )


def test_a_server_that_dies_at_start_is_reported_with_its_stderr(tmp_path: Path) -> None:
    code = "import sys; sys.stderr.write('cannot load the project\\n'); sys.exit(3)"
    crashing = LspServerSpec(
        name="crashy", command=(sys.executable, "-c", code), extensions=(".py",)
    )
    workspace = LspWorkspace([crashing], copy_project(tmp_path))
    try:
        answer = workspace.execute(LspQuery("symbols", "app.py"))
    finally:
        workspace.close()
    assert answer == Failed(
        "[lsp: crashy: could not start: the server exited with status 3 "
        "(stderr: cannot load the project)]"
    )


def test_a_server_that_never_answers_hits_the_time_limit_and_is_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "silent.pid"
    project = copy_project(tmp_path)
    workspace = LspWorkspace([silent_spec(pid_file)], project, Timeouts(start=0.5))
    try:
        answer = workspace.execute(LspQuery("symbols", "app.py"))
    finally:
        workspace.close()
    assert answer == Failed("[lsp: silent: could not start: no answer within 0.5s]")
    group = int(pid_file.read_text())
    group_ends(group)


def test_a_cancelled_call_returns_at_once_and_ends_the_server_it_was_starting(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "silent.pid"
    workspace = LspWorkspace([silent_spec(pid_file)], copy_project(tmp_path))
    cancel = threading.Event()
    threading.Thread(
        target=lambda: holds_within(pid_file.exists, timeout=10, interval=0.02) and cancel.set(),
        daemon=True,
    ).start()
    try:
        answer = workspace.execute(LspQuery("symbols", "app.py"), cancel)
    finally:
        workspace.close()
    assert answer == Interrupted()  # the tool says it in the words of SPEC §3
    group = int(pid_file.read_text())
    group_ends(group)


def test_settings_reach_the_server_through_workspace_configuration(tmp_path: Path) -> None:
    # basedpyright asks for its settings with workspace/configuration: its "all" mode flags the
    # missing parameter annotation that its "standard" mode lets pass.
    project = copy_project(tmp_path)
    (project / "untyped.py").write_text("def double(x):\n    return x * 2\n")
    answers = {}
    for mode in ("standard", "all"):
        spec = LspServerSpec(
            name="basedpyright",
            command=("basedpyright-langserver", "--stdio"),
            extensions=(".py",),
            settings={"basedpyright": {"analysis": {"typeCheckingMode": mode}}},
        )
        workspace = LspWorkspace([spec], project)
        try:
            answers[mode] = text_of(workspace.execute(LspQuery("diagnostics", "untyped.py")))
        finally:
            workspace.close()
    assert answers["standard"] == "no diagnostics: untyped.py is clean"
    assert 'annotation is missing for parameter "x"' in answers["all"]


def loading_spec(mode: str, delay: float) -> LspServerSpec:
    command = (sys.executable, str(FIXTURES / "loading_server.py"), mode, str(delay))
    return LspServerSpec(name="loading", command=command, extensions=(".py",))


def test_a_request_waits_longer_while_the_server_says_it_is_loading(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def greet(): ...\n")
    timeouts = Timeouts(request=0.5, indexing=20.0)  # the answer comes after 2 s
    workspace = LspWorkspace([loading_spec("loading", 2.0)], tmp_path, timeouts)
    try:
        answer = workspace.execute(LspQuery("definition", "a.py", symbol="greet"))
    finally:
        workspace.close()
    assert answer == Text("a.py:1:5  def greet(): ...")


def test_a_late_answer_without_a_word_of_loading_hits_the_time_limit(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def greet(): ...\n")
    timeouts = Timeouts(request=0.5, indexing=20.0)
    workspace = LspWorkspace([loading_spec("quiet", 3.0)], tmp_path, timeouts)
    try:
        answer = workspace.execute(LspQuery("definition", "a.py", symbol="greet"))
    finally:
        workspace.close()
    assert answer == Failed("[lsp: loading: definition failed: no answer within 0.5s]")


def test_an_import_line_answered_while_loading_is_asked_again_once_loaded(
    tmp_path: Path,
) -> None:
    (tmp_path / "app.py").write_text("from greetings import greet\n\ngreet()\n")
    (tmp_path / "greetings.py").write_text("def greet(): ...\n")
    command = (sys.executable, str(FIXTURES / "import_first_server.py"))
    spec = LspServerSpec(name="import-first", command=command, extensions=(".py",))
    workspace = LspWorkspace([spec], tmp_path, Timeouts(indexing=20.0))
    try:
        answer = workspace.execute(LspQuery("definition", "app.py", symbol="greet"))
    finally:
        workspace.close()
    assert answer == Text("greetings.py:1:5  def greet(): ...")


def test_a_server_killed_between_calls_is_reaped_at_once(
    own_workspace: LspWorkspace, server_spec: LspServerSpec
) -> None:
    assert (
        text_of(own_workspace.execute(LspQuery("definition", "app.py", "greet")))
        == GREET_DEFINITION
    )
    killed = own_workspace.server_pids()[server_spec.name]
    before = our_zombies()  # other tests' children are not this test's business
    os.kill(killed, signal.SIGKILL)
    # No call follows: the killed server must not stay a zombie child until mm-tui exits.
    wait_until(
        lambda: Path(f"/proc/{killed}").exists(),
        "the killed server reaped",
        until=lambda exists: not exists,
        timeout=10,
        interval=0.02,
    )
    # Nothing else of the server's is left unreaped either; a child another thread is about to
    # reap may show for a moment (seen under load), so this waits for the set to empty.
    wait_until(our_zombies, "no new zombie left", until=lambda now: not now - before,
               timeout=10, interval=0.05)  # fmt: skip
