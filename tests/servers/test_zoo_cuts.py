"""A stream cut mid-answer on every server of the zoo -- the connection closes after a few
events, with no closing chunk and no [DONE] -- ends the turn with one line saying the answer
was cut, never with the part taken as the whole answer. On a close-delimited server (mlx_lm,
KoboldCpp) the cut looks like an ordinary end of body: only the missing finish reason tells,
and KoboldCpp 1.76 writes the string "null" there on every chunk."""

from __future__ import annotations

from mm_tui.agent.events import Notice
from scripted_server import Reply
from tests.agent.conftest import AgentFactory, assert_valid_history
from tests.servers.zoo import Emulator

LONG = "The first part of a long answer, which goes on for a good while before it ends. " * 3


def test_a_stream_cut_mid_answer_is_said(emulator: Emulator, make_agent: AgentFactory) -> None:
    emulator.cut_after = b"The fi"  # the first piece of the answer's text
    emulator.enqueue(*[Reply(text=LONG)] * 4)
    agent, events = make_agent(base_url=emulator.base_url, model=emulator.model)

    ended = agent.run_turn("go")

    assert ended.reason == "error", (ended, agent.messages[-1:])
    errors = [n.text for n in events.of(Notice) if n.level == "error"]
    assert len(errors) == 1, errors
    assert "answer was cut off" in errors[0] or "broke mid-stream" in errors[0], errors
    assert_valid_history(agent.messages)
