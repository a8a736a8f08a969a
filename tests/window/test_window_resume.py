"""A resumed or replayed conversation is shown in the window.

`--continue` and `--resume` show every row, answer and notice of the session, those a compaction
summarised included (history is never deleted); `/export` writes all of it; the top line shows
the resumed context at once. A long session opens as records: only its newest blocks are
widgets, older ones are re-created when scrolled back to, and fold like any row.
Nothing here is timed (bench/ is).
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mm_tui.agent.agent import Agent
from mm_tui.agent.config import Config
from mm_tui.agent.events import ToolStatus
from mm_tui.app import MMApp
from mm_tui.replay import END_OF_REPLAY, Pace, Replay
from mm_tui.widgets.answer_blocks import AnswerBlock
from mm_tui.widgets.blocks import NoticeLine, SummaryLine, UserMessage
from mm_tui.widgets.tool_row import ToolRow
from mm_tui.widgets.top_line import short_count
from mm_tui.widgets.transcript import LIVE_MOST, OPEN_MOUNTED, REVIVE_BATCH
from mm_tui.window.ports import live_factory
from mm_tui.window.replay_source import replay_factory
from scripted_server import Reply, ToolCall
from tests.window.conftest import FIXED_CWD, send, settle, wait_for

pytestmark = pytest.mark.anyio


def _config(model_server: Any, **options: Any) -> Config:
    return Config(base_url=model_server.base_url, model="scripted-model", lsp_servers=(),
                  **options)  # fmt: skip


def _earlier_session(model_server: Any, project: Path) -> Agent:
    """A session of five turns on disk: a command, answers, and a compaction after turn 3
    that summarises turns 0 (but its request) and 1."""
    agent = Agent(_config(model_server, permissions="allow"), lambda _: None, project,
                  retry_delays=())  # fmt: skip
    model_server.enqueue(
        Reply(tool_calls=[ToolCall("bash", {"command": "echo early bird"})]),
        Reply(text="answer 0: the bird is early"),
    )
    agent.run_turn("request 0")
    for n in (1, 2, 3):
        model_server.enqueue(Reply(text=f"answer {n}"))
        agent.run_turn(f"request {n}")
    model_server.enqueue(Reply(text="## Goal\n- keep the birds early"))
    agent.compact()
    sent = json.dumps(agent.messages)
    assert "request 1" not in sent and "bird is early" not in sent  # the model no longer gets...
    model_server.enqueue(Reply(text="answer 4"))
    agent.run_turn("request 4")
    agent.close()
    return agent


def _said(app: MMApp) -> list[str]:
    return [message.text for message in app.query(UserMessage)]


def _screen(app: MMApp) -> str:
    """The text on screen, as the screenshot has it."""
    svg = re.sub(r"<[^>]+>", "", app.export_screenshot())
    return html.unescape(svg).replace("\xa0", " ")


async def test_continue_shows_the_whole_conversation_compacted_turns_included(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    earlier = _earlier_session(model_server, project)
    config = _config(model_server, permissions="ask")
    app = MMApp(config, project, agent_factory=live_factory(config, project, None, True),
                history_path=tmp_path / "history.jsonl")  # fmt: skip
    async with app.run_test(size=(100, 60)) as pilot:
        resumed = f"resumed session {earlier.session.id}"
        await wait_for(pilot, lambda: any(n.text.startswith(resumed) for n in app.query(NoticeLine)),
                       "the resumed notice")  # fmt: skip
        await settle(pilot)
        assert _said(app) == [f"request {n}" for n in range(5)]  # ...but the window shows them
        [row] = app.query(ToolRow)
        assert (row.title, row.status, row.output) == ("bash echo early bird", ToolStatus.DONE,
                                                       "early bird\n")  # fmt: skip
        answers = [block.to_markdown() for block in app.query(AnswerBlock)]
        assert answers[0] == "answer 0: the bird is early"
        assert any(text.endswith("## Goal\n- keep the birds early") for text in answers)
        assert answers[-1] == "answer 4"
        assert len(app.query(SummaryLine)) == 5
        assert END_OF_REPLAY not in [n.text for n in app.query(NoticeLine)]  # not a replay
        # the earlier conversation comes first, the notices of this start after it
        transcript = list(app.transcript.children)
        notice = next(b for b in transcript if isinstance(b, NoticeLine) and resumed in b.text)
        assert transcript.index(notice) > transcript.index(app.query(SummaryLine).last())

        # the conversation goes on below what was resumed
        model_server.enqueue(Reply(text="answer 5"))
        await send(pilot, "request 5")
        await wait_for(pilot, lambda: not app.turns.running and "request 5" in _said(app),
                       "the new turn ends")  # fmt: skip
        assert _said(app)[-2:] == ["request 4", "request 5"]


async def test_export_after_continue_holds_every_message_of_the_history(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    _earlier_session(model_server, project)
    config = _config(model_server)
    app = MMApp(config, project, agent_factory=live_factory(config, project, None, True),
                history_path=tmp_path / "history.jsonl")  # fmt: skip
    async with app.run_test(size=(100, 40)) as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None and len(_said(app)) == 5,
                       "the resumed conversation")  # fmt: skip
        await send(pilot, "/export talk.md")
        exported = project / "talk.md"
        await wait_for(pilot, exported.exists, "the export is written")
        text = exported.read_text()
    for n in range(5):
        assert f"> request {n}" in text
    assert text.index("> request 0") < text.index("echo early bird") < text.index("> request 1")
    assert "answer 0: the bird is early" in text and "early bird\n" in text
    assert "## Goal" in text and text.index("> request 3") < text.index("## Goal")


async def test_the_top_line_shows_the_resumed_context_before_any_turn(
    model_server: Any, project: Path, tmp_path: Path
) -> None:
    earlier = _earlier_session(model_server, project)
    asked = len(model_server.requests)
    config = _config(model_server, context_window=8192)
    app = MMApp(config, project,
                agent_factory=live_factory(config, project, earlier.session.id, False),
                history_path=tmp_path / "history.jsonl")  # fmt: skip
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_for(pilot, lambda: app.turns.port is not None, "the agent is ready")
        await settle(pilot)
        agent = app.turns.port
        assert isinstance(agent, Agent)
        used = agent.context_tokens
        assert used > 0 and not app.turns.running and len(model_server.requests) == asked
        top = str(app.query_one("#top-line").render())
        assert f"context {short_count(used)}/8.2k" in top
        assert _said(app) == [f"request {n}" for n in range(5)]  # --resume ID shows it too


# -- a long session, replayed at speed 0 ----------------------------------------------------

TURNS = 120  # five rows a turn: 600 rows, 1,100 blocks


def long_session(turns: int) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "be brief"}]
    meta: dict[str, Any] = {}
    for n in range(turns):
        calls = [{"id": f"c{n}_{k}", "type": "function",
                  "function": {"name": "bash", "arguments": json.dumps({"command": f"echo {n} {k}"})}}
                 for k in range(5)]  # fmt: skip
        messages += [{"role": "user", "content": f"turn {n}"},
                     {"role": "assistant", "content": "", "tool_calls": calls}]  # fmt: skip
        for k in range(5):
            messages.append({"role": "tool", "tool_call_id": f"c{n}_{k}",
                             "content": f"output of {n} {k}\n" * 3})  # fmt: skip
            meta[f"c{n}_{k}"] = {"status": "failed" if k == 4 else "done", "duration": 0.1}
        messages.append({"role": "assistant", "content": f"Answer **{n}**."})
    return {"model": "m", "base_url": "http://127.0.0.1:1/v1", "cwd": "/x", "messages": messages,
            "tool_meta": meta, "usage": {}, "errors": []}  # fmt: skip


async def test_a_long_replay_reaches_its_end_and_rows_come_back_and_fold_when_scrolled_to(
    tmp_path: Path,
) -> None:
    session = long_session(TURNS)
    factory = replay_factory(Replay(session, Pace(speed=0)), {"model": "m"}, cwd=FIXED_CWD)
    app = MMApp(Config(), FIXED_CWD, agent_factory=factory, build_in_worker=False,
                history_path=tmp_path / "h.jsonl", still=True)  # fmt: skip
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.transcript

        def ended() -> bool:
            children = transcript.children
            return len(children) > 1 and getattr(children[-1], "text", "") == END_OF_REPLAY

        await wait_for(pilot, ended, "the replay's end below its last turn")
        await settle(pilot)
        assert [n.text for n in app.query(NoticeLine)] == [END_OF_REPLAY]  # said once
        assert len(transcript.children) <= 2 * OPEN_MOUNTED + 1  # not 1,100 widgets
        last = f"c{TURNS - 1}_4"
        assert transcript.rows[last].status == ToolStatus.FAILED
        assert transcript.rows[last].expanded  # a failure opens, as it did live
        exported = transcript.to_markdown()
        assert [f"> turn {n}" in exported for n in range(TURNS)] == [True] * TURNS

        def first_said() -> str:
            first = transcript.children[0]
            return first.text if isinstance(first, UserMessage) else ""

        most = 0
        for _ in range(TURNS):  # each visit to the top brings a batch back above
            if first_said() == "turn 0":
                break
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, lambda: transcript.scroll_y > 0 or first_said() == "turn 0",
                           "a batch comes back above, the view kept")  # fmt: skip
            await settle(pilot)
            most = max(most, len(transcript.children))
        assert first_said() == "turn 0"
        assert most <= LIVE_MOST + 1  # the blocks far below left again: never 1,100 widgets
        assert last not in transcript.rows  # the last turn's rows are records below
        row = transcript.rows["c0_1"]
        assert (row.title, row.status, row.expanded) == ("bash echo 0 1", ToolStatus.DONE, False)
        row.focus()
        await pilot.press("enter")
        await wait_for(pilot, lambda: row.expanded and bool(row.children), "the row unfolds")
        await wait_for(pilot, lambda: "output of 0 1" in _screen(app), "its output shows")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not row.expanded and not row.children, "the row folds")
        assert transcript.to_markdown() == exported

        most = 0
        for _ in range(40 * TURNS):  # down again, page by page: the records below come back
            if last in transcript.rows:
                break
            transcript.scroll_by_key("page_down")
            await pilot.pause()
            most = max(most, len(transcript.children))
        assert last in transcript.rows and most <= LIVE_MOST + REVIVE_BATCH
        assert transcript.to_markdown() == exported
        said = [b.text for b in transcript.children if isinstance(b, UserMessage)]
        assert said == [f"turn {n}" for n in range(TURNS - len(said), TURNS)]  # in order

        transcript.scroll_home(animate=False, immediate=True)  # up a little again, then End
        await settle(pilot)
        transcript.scroll_by_key("bottom")  # End: back to the newest blocks at once
        await wait_for(pilot, lambda: last in transcript.rows and ended(), "the end again")
        await settle(pilot)
        assert len(transcript.children) <= LIVE_MOST
        assert transcript.scroll_y == transcript.max_scroll_y
        assert transcript.to_markdown() == exported


async def test_a_turn_of_hundreds_of_one_line_rows_fills_a_tall_view_and_scrolls_back(
    tmp_path: Path,
) -> None:
    session = long_session(1)
    calls = [{"id": f"r{k}", "type": "function",
              "function": {"name": "bash", "arguments": json.dumps({"command": f"true {k}"})}}
             for k in range(300)]  # fmt: skip
    session["messages"][2:] = [{"role": "assistant", "content": "", "tool_calls": calls}]
    session["messages"] += [{"role": "tool", "tool_call_id": f"r{k}", "content": ""}
                            for k in range(300)]  # fmt: skip
    factory = replay_factory(Replay(session, Pace(speed=0)), {"model": "m"}, cwd=FIXED_CWD)
    app = MMApp(Config(), FIXED_CWD, agent_factory=factory, build_in_worker=False,
                history_path=tmp_path / "h.jsonl", still=True)  # fmt: skip
    async with app.run_test(size=(100, 80)) as pilot:
        transcript = app.transcript
        await wait_for(pilot, lambda: "r299" in transcript.rows, "the last row")
        await wait_for(pilot, lambda: transcript.max_scroll_y > 0, "more than the view holds")
        await settle(pilot)
        assert transcript.virtual_size.height >= transcript.size.height  # not 24 lines of 80
        assert len(transcript.children) < 300
        for _ in range(300):
            if "r0" in transcript.rows:
                break
            transcript.scroll_home(animate=False, immediate=True)
            await wait_for(pilot, lambda: transcript.scroll_y > 0 or "r0" in transcript.rows,
                           "a batch comes back above")  # fmt: skip
        assert isinstance(transcript.children[0], UserMessage)  # the turn's message, first


async def test_ctrl_home_pressed_fast_then_end_on_the_focused_transcript_shows_the_newest(
    tmp_path: Path,
) -> None:
    session = long_session(TURNS)
    factory = replay_factory(Replay(session, Pace(speed=0)), {"model": "m"}, cwd=FIXED_CWD)
    app = MMApp(Config(), FIXED_CWD, agent_factory=factory, build_in_worker=False,
                history_path=tmp_path / "h.jsonl", still=True)  # fmt: skip
    async with app.run_test(size=(100, 30)) as pilot:
        transcript = app.transcript
        last = f"c{TURNS - 1}_4"
        await wait_for(pilot, lambda: last in transcript.rows, "the last row")
        for _ in range(8):  # as fast as keys come: a press during a revive is not lost work
            await pilot.press("ctrl+home")
        for _ in range(6):
            await pilot.press("ctrl+home")
            await settle(pilot)
        await wait_for(pilot, lambda: last not in transcript.rows, "the newest left, below")
        app.animation_level = "full"  # Textual's own End animates its scroll
        transcript.focus()
        await pilot.press("end")
        await wait_for(pilot, lambda: last in transcript.rows, "the newest blocks again")
        await settle(pilot)
        assert transcript.scroll_y == transcript.max_scroll_y
        assert getattr(transcript.children[-1], "text", "") == END_OF_REPLAY
        assert len(transcript.children) <= LIVE_MOST
