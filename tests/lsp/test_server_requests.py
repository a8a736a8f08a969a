"""The client answers what servers ask, and honours the encoding a server negotiates.

The server here is a real process: a small pygls server (fixtures/asking_server.py) that asks
what pyright, gopls and rust-analyzer ask, announces the encoding it is told to, and reports
in its hover what it received.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from mm_tui.lsp.connection import Timeouts
from mm_tui.lsp.query import LspQuery
from mm_tui.lsp.spec import LspServerSpec
from mm_tui.lsp.workspace import LspWorkspace
from tests.lsp.conftest import FIXTURES, text_of

LINE = 'label = "🎉é" + name\n'  # `name` is 15 characters in: 16 UTF-16 units, 19 bytes


def asking_workspace(root: Path, encoding: str) -> LspWorkspace:
    spec = LspServerSpec(
        name="asking",
        command=(sys.executable, str(FIXTURES / "asking_server.py"), encoding),
        extensions=(".py",),
        settings={"asking": {"depth": 3}},
    )
    (root / "m.py").write_text(LINE)
    return LspWorkspace([spec], root, Timeouts(start=20))


@pytest.fixture
def utf8_workspace(tmp_path: Path) -> Iterator[LspWorkspace]:
    workspace = asking_workspace(tmp_path, "utf-8")
    yield workspace
    workspace.close()


def hover_report(workspace: LspWorkspace) -> tuple[int, dict[str, object]]:
    text = text_of(workspace.execute(LspQuery("hover", "m.py", "name")))
    character, _, answers = text.partition("; answers ")
    return int(character.removeprefix("character ")), json.loads(answers)


def test_every_request_a_server_sends_gets_a_plain_answer(utf8_workspace: LspWorkspace) -> None:
    _, answers = hover_report(utf8_workspace)
    assert answers == {
        "showMessageRequest": None,  # no person to pick an action: none is chosen
        "configuration": [3, None],  # one entry per item, from the server's settings
        "progress": None,
        "registerCapability": None,
    }


@pytest.mark.parametrize(("encoding", "character"), [("utf-8", 19), ("utf-16", 16), ("utf-32", 15)])
def test_positions_are_sent_in_the_encoding_the_server_chose(
    tmp_path: Path, encoding: str, character: int
) -> None:
    workspace = asking_workspace(tmp_path, encoding)
    try:
        assert hover_report(workspace)[0] == character
    finally:
        workspace.close()


def test_a_server_that_never_publishes_diagnostics_is_said_so(utf8_workspace: LspWorkspace) -> None:
    assert text_of(utf8_workspace.execute(LspQuery("diagnostics", "m.py"))) == (
        "no diagnostics received for m.py within 3s "
        "(asking may still be analysing the project; call diagnostics again)"
    )


def test_the_call_again_advice_is_given_only_while_it_can_help(tmp_path: Path) -> None:
    # A server past its loading time that never published for the file: asking again
    # would not help, so the answer does not advise it.
    workspace = asking_workspace(tmp_path, "utf-16")
    workspace.timeouts = Timeouts(start=20, indexing=0.0)
    try:
        answer = text_of(workspace.execute(LspQuery("diagnostics", "m.py")))
    finally:
        workspace.close()
    assert answer == (
        "no diagnostics received for m.py within 3s (asking published nothing for this file)"
    )


def test_an_action_the_server_does_not_offer_is_refused_in_words(
    utf8_workspace: LspWorkspace,
) -> None:
    assert text_of(
        utf8_workspace.execute(LspQuery("rename", "m.py", "name", new_name="title"))
    ) == ("[lsp: asking does not offer rename]")
