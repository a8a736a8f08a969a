"""Event sequences the window is shown, exactly as the core would emit them."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from mm_tui.agent.events import (
    COMPOSING_TOOL_CALL,
    THINKING,
    WAITING_FOR_ANSWER,
    WAITING_FOR_MODEL,
    WRITING,
    AssistantMessageDone,
    Notice,
    PermissionAnswer,
    PermissionRequest,
    ReasoningDelta,
    SpinnerChanged,
    TextDelta,
    ToolFinished,
    ToolOutputDelta,
    ToolStarted,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
    running_state,
)

ANSWER_WITH_CODE = """The crash comes from `greet` indexing an empty string.

## Fix

```python
def greet(name: str) -> str:
    if not name:
        return "Hello, stranger!"
    return f"Hello, {name[0].upper()}{name[1:]}!"
```

- empty names get a default
- the rest is unchanged
"""

EDIT_DIFF = """--- a/greeter.py
+++ b/greeter.py
@@ -1,3 +1,5 @@
 def greet(name: str) -> str:
+    if not name:
+        return "Hello, stranger!"
     return f"Hello, {name[0].upper()}{name[1:]}!"
"""


def chunks(text: str, size: int = 7) -> list[TextDelta]:
    """The answer as the stream delivers it."""
    return [TextDelta(text[i : i + size]) for i in range(0, len(text), size)]


def streamed_answer() -> list[Any]:
    """A question, some reasoning, and an answer with code, streamed in small pieces."""
    return [
        TurnStarted("Why does greet('') crash? Fix it."),
        SpinnerChanged(WAITING_FOR_MODEL),
        SpinnerChanged(THINKING),
        ReasoningDelta("The index [0] fails on an empty string."),
        SpinnerChanged(WRITING),
        *chunks(ANSWER_WITH_CODE),
        AssistantMessageDone(ANSWER_WITH_CODE, "The index [0] fails on an empty string."),
    ]


def bash_call(call_id: str, command: str) -> ToolStarted:
    return ToolStarted(call_id, "bash", {"command": command}, f"bash {command}")


def running_row() -> list[Any]:
    """A command that is still running, with live output."""
    return [
        TurnStarted("Run the tests"),
        SpinnerChanged(WAITING_FOR_MODEL),
        SpinnerChanged(COMPOSING_TOOL_CALL),
        AssistantMessageDone("", ""),
        bash_call("run1", "python -m pytest -q"),
        SpinnerChanged(running_state("bash")),
        ToolOutputDelta("run1", "....F.\n"),
    ]


def finished_rows_in_every_status() -> list[Any]:
    """One finished row per ToolStatus but running; failures open."""
    finished = [
        ("done", "bash ls", ToolStatus.DONE, "greeter.py\ntest_greeter.py\n"),
        ("failed", "bash python -m pytest -q", ToolStatus.FAILED, "1 failed\n[exit code: exit status 1]"),
        ("timeout", "bash sleep 60", ToolStatus.TIMED_OUT, "[error: 30s timeout exceeded]"),
        ("rejected", "bash rm -rf build", ToolStatus.REJECTED, "[command rejected by the user]"),
        ("interrupted", "bash make", ToolStatus.INTERRUPTED, "[interrupted by the user]"),
        ("loop", "read_file greeter.py", ToolStatus.LOOP_DETECTED, "[error: the model repeated the same read_file call 6 times in a row with the same failing result — turn stopped by the loop detector; rephrase the request, or fix what the tool kept reporting]"),
    ]  # fmt: skip
    events: list[Any] = [TurnStarted("Show me every kind of row")]
    for call_id, title, status, output in finished:
        name, _, rest = title.partition(" ")
        events.append(ToolStarted(call_id, name, {"command": rest}, title))
        durations = {"timeout": 30.0, "done": 0.2}
        events.append(
            ToolFinished(call_id, name, title, status, durations.get(call_id, 1.4), output)
        )
    return events


def permission_question(future: Future[PermissionAnswer]) -> list[Any]:
    """The row asks before running a command."""
    return [
        TurnStarted("Clean the build"),
        SpinnerChanged(WAITING_FOR_MODEL),
        AssistantMessageDone("", ""),
        bash_call("ask1", "rm -rf build/ dist/"),
        SpinnerChanged(WAITING_FOR_ANSWER),
        PermissionRequest("ask1", "bash", "bash rm -rf build/ dist/", "rm -rf build/ dist/", None, future),
    ]  # fmt: skip


def edit_with_diff() -> list[Any]:
    """An edit, allowed, finished with its diff (opened by the test)."""
    header = "edited greeter.py: 1 edit, +2 −0 lines, first change at line 2"
    return [
        TurnStarted("Fix greet"),
        AssistantMessageDone("", ""),
        ToolStarted("edit1", "edit_file", {"path": "greeter.py"}, "edit_file greeter.py"),
        ToolFinished("edit1", "edit_file", "edit_file greeter.py", ToolStatus.DONE, 0.1,
                     header + "\n" + EDIT_DIFF, EDIT_DIFF),
    ]  # fmt: skip


def lsp_row() -> list[Any]:
    """An lsp definition: action, path and symbol on the row."""
    output = "greeter.py:1:5  def greet(name: str) -> str:"
    arguments = {"action": "definition", "path": "main.py", "symbol": "greet"}
    return [
        TurnStarted("Where is greet defined?"),
        AssistantMessageDone("", ""),
        ToolStarted("lsp1", "lsp", arguments, "lsp definition main.py greet"),
        ToolFinished("lsp1", "lsp", "lsp definition main.py greet", ToolStatus.DONE, 0.3, output),
    ]


def turn_summary() -> list[Any]:
    """A short turn and its summary line."""
    return [
        TurnStarted("List the files"),
        AssistantMessageDone("", ""),
        bash_call("ls1", "ls"),
        ToolFinished("ls1", "bash", "bash ls", ToolStatus.DONE, 0.1, "greeter.py\n"),
        TextDelta("Two files: `greeter.py` and its test."),
        AssistantMessageDone("Two files.", ""),
        TurnSummary(1, 0, 0, 0, 2.4, 1830, 42),
        TurnEnded("answered"),
    ]


def server_error() -> list[Any]:
    """The server is unreachable: one clear line, the turn ends."""
    message = "cannot reach the model server at http://localhost:11434/v1 (connection refused)"
    return [
        TurnStarted("Hello?"),
        SpinnerChanged(WAITING_FOR_MODEL),
        Notice("error", message),
        SpinnerChanged(""),
        TurnSummary(0, 0, 0, 0, 0.0, 0, 0),
        TurnEnded("error", message),
    ]


def hostile_text() -> list[Any]:
    """Markup, escape sequences, a 10,000-line output and a very long line."""
    long_output = "\n".join(f"line {n}" for n in range(10_000))
    return [
        TurnStarted("Print [bold]this[/bold] and \x1b[31mred\x1b[0m"),
        TextDelta("Model says [red]not red[/red] and \x1b[2Jno clear; [link=x]no link[/link]."),
        AssistantMessageDone("", ""),
        bash_call("big", "seq 10000"),
        ToolFinished("big", "bash", "bash seq 10000", ToolStatus.FAILED, 0.5, long_output),
        bash_call("wide", "python -c 'print(\"x\" * 100000)'"),
        ToolFinished("wide", "bash", "bash python -c 'print(\"x\" * 100000)'", ToolStatus.FAILED,
                     0.2, "[bold]" + "x" * 100_000 + "[/bold]\x1b[1mEND"),
        Notice("warning", "[warning: lsp server gopls (gopls) not found on the PATH — skipped]"),
    ]  # fmt: skip


def a_conversation() -> list[Any]:
    """A small whole conversation, for the terminal-size snapshots."""
    return [*streamed_answer(), *turn_summary()]


REPAIRED_RAW = (
    'I will list the files.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n'
    "</tool_call>"
)


def repaired_calls() -> list[Any]:
    """Calls a weak model wrote badly, each with the badge of the rung that recovered it."""
    return [
        TurnStarted("What is in this folder?"),
        ToolStarted(
            "fix1", "bash", {"command": "ls"}, "bash ls", "from text: <tool_call>", REPAIRED_RAW
        ),
        ToolFinished(
            "fix1", "bash", "bash ls", ToolStatus.DONE, 0.1, "greeter.py\ntest_greeter.py\n"
        ),
        ToolStarted(
            "fix2",
            "Read_File",
            {"path": "greeter.py"},
            "read_file greeter.py",
            "tool name fixed, repaired JSON",
            '{"path": "greeter.py",}',
        ),
        ToolFinished(
            "fix2",
            "Read_File",
            "read_file greeter.py",
            ToolStatus.DONE,
            0.0,
            "def greet(name): ...",
        ),
        ToolStarted("fix3", "list_files", {}, "list_files"),
        ToolFinished(
            "fix3",
            "list_files",
            "list_files",
            ToolStatus.FAILED,
            0.0,
            '[error: there is no tool named "list_files". Did you mean "read_file"? Available tools: bash, read_file]',
        ),
    ]
