"""`/undo`: the files the last turn changed come back as they were, the turn's
message returns to the prompt, and a file the person changed since is never clobbered silently.

Pilot tests against the real Agent, the scripted server over HTTP and real files; the rename
runs against a real language server (pylsp).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.app import MMApp
from mm_tui.lsp.defaults import PYLSP
from mm_tui.widgets.prompt import PromptInput
from mm_tui.window.undo_lines import BACK_IN_PROMPT, NOTHING_TO_UNDO
from scripted_server import Reply, ToolCall
from tests.window.conftest import send, settle, wait_for
from tests.window.test_window_conversation import notices, turn_over

pytestmark = pytest.mark.anyio

ORIGINAL = 'def greet(name: str) -> str:\n    return f"Hello, {name[0].upper()}{name[1:]}!"\n'
PYPROJ = Path(__file__).resolve().parents[1] / "lsp" / "fixtures" / "pyproj"
_SCRIPTS = str(Path(sys.executable).parent)  # pylsp beside this interpreter


def edit_and_create(server: Any) -> None:
    """A turn that edits greeter.py, creates notes/todo.md in a new folder, and answers."""
    server.enqueue(
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"path": "greeter.py", "edits": [{"old": "Hello", "new": "Howdy"}]},
                ),
                ToolCall("write_file", {"path": "notes/todo.md", "content": "- greet\n"}),
            ]
        ),
        Reply(text="Done."),
    )


async def undo(pilot: Any) -> None:
    await send(pilot, "/undo")
    await settle(pilot)


async def test_undo_restores_the_edited_file_removes_the_created_one_and_gives_the_message_back(
    model_server: Any, live_app: Any, project: Path
) -> None:
    greeter = project / "greeter.py"
    greeter.chmod(0o640)
    edit_and_create(model_server)
    model_server.enqueue(Reply(text="ok"))
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "make it friendlier and note it")
        await wait_for(pilot, turn_over(app), "the turn ends")
        assert "Howdy" in greeter.read_text() and (project / "notes" / "todo.md").exists()

        await undo(pilot)
        await wait_for(pilot, lambda: BACK_IN_PROMPT in notices(app), "the undo is said")
        assert greeter.read_text() == ORIGINAL
        assert os.stat(greeter).st_mode & 0o777 == 0o640  # the mode is kept
        assert not (project / "notes").exists()  # the file and the folder the turn made
        assert (
            "undid the turn “make it friendlier and note it”: restored greeter.py; "
            "removed notes/todo.md (the turn created it)"
        ) in notices(app)
        prompt = app.query_one(PromptInput)
        assert prompt.text == "make it friendlier and note it"

        prompt.clear()
        await undo(pilot)  # nothing older changed a file
        await wait_for(pilot, lambda: NOTHING_TO_UNDO in notices(app), "nothing to undo")
        assert prompt.text == ""

        await send(pilot, "again")  # the model learns what was undone with the next message
        await wait_for(pilot, turn_over(app, 2), "the next turn ends")
        sent = model_server.requests[-1]["messages"][-1]["content"]
        assert sent.startswith("again\n\n<undo>\nThe person undid the file changes of the turn ")
        assert "restored greeter.py; removed notes/todo.md (it did not exist before)" in sent


async def test_undo_with_nothing_to_undo_says_so(live_app: Any) -> None:
    app = live_app()
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await undo(pilot)
        await wait_for(pilot, lambda: NOTHING_TO_UNDO in notices(app), "nothing to undo")
        assert app.query_one(PromptInput).text == ""


async def test_a_file_the_person_changed_or_deleted_since_is_kept_until_they_force(
    model_server: Any, live_app: Any, project: Path
) -> None:
    edit_and_create(model_server)
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "change things")
        await wait_for(pilot, turn_over(app), "the turn ends")
        greeter = project / "greeter.py"
        greeter.write_text(greeter.read_text() + "# mine\n")  # the person's own edit
        (project / "notes" / "todo.md").unlink()  # and a file they deleted

        await undo(pilot)
        await wait_for(pilot, lambda: any("/undo: nothing" in n for n in notices(app)), "refused")
        assert (
            "/undo: nothing restored — changed since the turn: greeter.py, notes/todo.md "
            "(deleted). /undo force puts the turn's files back anyway, and those changes are lost"
        ) in notices(app)
        assert greeter.read_text().endswith("# mine\n")  # not clobbered
        assert app.query_one(PromptInput).text == ""

        await send(pilot, "/undo force")
        await wait_for(pilot, lambda: BACK_IN_PROMPT in notices(app), "the forced undo")
        assert greeter.read_text() == ORIGINAL
        assert not (project / "notes").exists()
        assert (
            "/undo force: your later changes to greeter.py, notes/todo.md (deleted) were replaced"
        ) in notices(app)


async def test_undos_in_a_row_walk_back_turn_by_turn_and_binary_files_come_back_exactly(
    model_server: Any, live_app: Any, project: Path
) -> None:
    blob = project / "logo.bin"
    data = bytes(range(256)) * 4
    blob.write_bytes(data)
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("write_file", {"path": "logo.bin", "content": "text now\n"})]),
        Reply(text="Replaced."),
        Reply(
            tool_calls=[
                ToolCall(
                    "edit_file",
                    {"path": "greeter.py", "edits": [{"old": "Hello", "new": "Hi"}]},
                )
            ]
        ),
        Reply(text="Edited."),
    )
    app = live_app(yolo=True)
    async with app.run_test() as pilot:
        await send(pilot, "first")
        await wait_for(pilot, turn_over(app), "the first turn ends")
        await send(pilot, "second")
        await wait_for(pilot, turn_over(app, 2), "the second turn ends")
        assert blob.read_bytes() == b"text now\n" and "Hi," in (project / "greeter.py").read_text()

        await undo(pilot)
        await wait_for(pilot, lambda: notices(app).count(BACK_IN_PROMPT) == 1, "first undo")
        assert (project / "greeter.py").read_text() == ORIGINAL
        assert blob.read_bytes() == b"text now\n"  # the older turn is not touched yet
        prompt = app.query_one(PromptInput)
        assert prompt.text == "second"
        prompt.clear()

        await undo(pilot)
        await wait_for(pilot, lambda: notices(app).count(BACK_IN_PROMPT) == 2, "second undo")
        assert blob.read_bytes() == data
        assert prompt.text == "first"


@pytest.fixture
def pylsp_app(
    model_server: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[], MMApp]]:
    """An app whose lsp tool runs pylsp on a copy of the two-file Python project."""
    monkeypatch.setenv("PATH", os.pathsep.join([_SCRIPTS, os.environ.get("PATH", "")]))
    project = tmp_path / "pyproj"
    shutil.copytree(PYPROJ, project)
    agents: list[Agent] = []
    config = Config(
        base_url=model_server.base_url, model="scripted-model", lsp_servers=(PYLSP,), yolo=True
    )

    def factory(sink: Callable[[Any], None]) -> Agent:
        agents.append(Agent(config, sink, project, retry_delays=()))
        return agents[-1]

    yield lambda: MMApp(config, project, agent_factory=factory, history_path=tmp_path / "h")
    for agent in agents:
        agent.close()


async def test_undo_puts_back_every_file_an_lsp_rename_wrote(
    model_server: Any, pylsp_app: Callable[[], MMApp], tmp_path: Path
) -> None:
    project = tmp_path / "pyproj"
    before = {name: (project / name).read_text() for name in ("app.py", "greetings.py")}
    rename = {"action": "rename", "path": "app.py", "symbol": "greet", "new_name": "salute"}
    model_server.enqueue(Reply(tool_calls=[ToolCall("lsp", rename)]), Reply(text="Renamed."))
    app = pylsp_app()
    async with app.run_test() as pilot:
        await send(pilot, "rename greet to salute")
        await wait_for(pilot, turn_over(app), "the rename turn ends")
        assert "def salute(" in (project / "greetings.py").read_text()
        await undo(pilot)
        await wait_for(pilot, lambda: BACK_IN_PROMPT in notices(app), "the undo is said")
        assert {name: (project / name).read_text() for name in before} == before
        assert (
            "undid the turn “rename greet to salute”: restored app.py, greetings.py"
        ) in notices(app)
