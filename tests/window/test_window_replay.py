"""`--replay` and `--demo`: a session file played back as events, with no model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.config import Config
from mm_tui.agent.events import (
    Notice,
    TextDelta,
    ToolFinished,
    ToolStatus,
    TurnEnded,
    TurnStarted,
    TurnSummary,
)
from mm_tui.app import MMApp
from mm_tui.launch import run_app
from mm_tui.replay import END_OF_REPLAY, Pace, ReplayError, demo_path, load_replay
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.window.replay_source import replay_factory
from tests.window.conftest import FIXED_CWD, wait_for

pytestmark = pytest.mark.anyio
AT_ONCE = Pace(speed=0)


def events_of(path: Path) -> list[Any]:
    timed, _ = load_replay(path, AT_ONCE)
    return [event for _, event in timed]


def test_the_demo_holds_every_kind_of_block() -> None:
    events = events_of(demo_path())
    statuses = {e.status for e in events if isinstance(e, ToolFinished)}
    assert statuses >= {
        ToolStatus.DONE,
        ToolStatus.FAILED,
        ToolStatus.REJECTED,
        ToolStatus.TIMED_OUT,
    }
    names = {e.name for e in events if isinstance(e, ToolFinished)}
    assert names >= {"bash", "edit_file", "lsp", "read_file"}
    assert any(e.diff for e in events if isinstance(e, ToolFinished))
    assert "```python" in "".join(e.text for e in events if isinstance(e, TextDelta))
    assert [e.level for e in events if isinstance(e, Notice)] == ["error", "info"]


def test_a_session_becomes_turns_with_their_summaries(tmp_path: Path) -> None:
    session = {
        "version": 1,
        "model": "m",
        "base_url": "http://127.0.0.1:1/v1",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "list"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "bash", "arguments": "{\"command\": \"ls\"}"}},
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "a.py\n"},
            {"role": "assistant", "content": "One file."},
            {"role": "user", "content": "again"},
        ],
        "tool_meta": {"c1": {"title": "bash ls", "status": "done", "duration": 0.5, "diff": None}},
        "usage": {"prompt_tokens": 100, "completion_tokens": 10},
        "errors": [{"time": "t", "where": "model", "message": "server gone"}],
    }  # fmt: skip
    path = tmp_path / "s.json"
    path.write_text(json.dumps(session))
    events = events_of(path)
    assert [e.text for e in events if isinstance(e, TurnStarted)] == ["list", "again"]
    finished = next(e for e in events if isinstance(e, ToolFinished))
    assert (finished.title, finished.status, finished.duration, finished.output) == (
        "bash ls",
        ToolStatus.DONE,
        0.5,
        "a.py\n",
    )
    first, second = (e for e in events if isinstance(e, TurnSummary))
    assert (first.commands, first.duration, second.commands) == (1, 0.5, 0)
    assert first.prompt_tokens + second.prompt_tokens == 100
    ends = [e for e in events if isinstance(e, TurnEnded)]
    assert ends == [TurnEnded("answered"), TurnEnded("error", "server gone")]
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "One file."


@pytest.mark.parametrize(
    ("content", "said"),
    [(None, "cannot read"), ("{nope", "is not JSON"), ('{"messages": 3}', "not a session file")],
)
def test_a_bad_file_is_one_clear_line(tmp_path: Path, content: str | None, said: str) -> None:
    path = tmp_path / "bad.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReplayError, match=said):
        load_replay(path)


def test_run_app_refuses_a_bad_replay_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_app(Config(), tmp_path, replay=tmp_path / "missing.json") == 2
    assert "cannot read" in capsys.readouterr().err


async def test_the_demo_plays_in_the_window(tmp_path: Path) -> None:
    events, meta = load_replay(demo_path(), AT_ONCE)
    app = MMApp(
        Config(), FIXED_CWD, agent_factory=replay_factory(events, meta, cwd=FIXED_CWD),
        build_in_worker=False, history_path=tmp_path / "h.jsonl",
    )  # fmt: skip
    async with app.run_test(size=(120, 40)) as pilot:
        ended = lambda: any(n.text == END_OF_REPLAY for n in app.query(NoticeLine))  # noqa: E731
        await wait_for(pilot, ended, "the replay ends")
        assert len(app.query(UserMessage)) == 3
        assert len(app.query(SummaryLine)) == 3
        assert len(app.transcript.rows) == 8
        assert any("```python" in block.to_markdown() for block in app.query(AnswerBlock))
        assert not app.turns.running
        assert "qwen2.5-coder:14b" in str(app.query_one("#top-line").render())
