"""The gathered corpus (tests/agent/fixtures/gathered_replies.yaml): real replies from sources
no other corpus used — parser tests at a commit, replies recorded live, calls leaked into the text
by a proxy — among them replies that show a call without meaning it (a format explained, a config
in a fence, a record with a `name` key, a turn the model invented), replayed through the agent
core over real HTTP to their exact outcome."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import (
    gathered_cases,
    heldout_cases,
    malformed_cases,
    quoted_cases,
    replay_case,
    world_cases,
)
from scripted_server import ScriptedServer
from tests.agent.conftest import assert_replays_exactly, said_in

CORPUS = gathered_cases()
SHOWN = ("offered", "declined", "quoted", "illustrated")


def _where(source: str) -> str:
    """The file or thread a source names, whatever the commit: `owner/repo/path`."""
    return re.sub(r"/blob/[0-9a-f]{7,40}/", "/", str(source).split(" (")[0])


def test_the_corpus_is_real_traced_new_and_holds_shown_calls() -> None:
    shown = [case for case in CORPUS if case.get("class") in SHOWN]
    assert len(CORPUS) >= 40 and len(shown) >= 15
    older = [*world_cases(), *heldout_cases(), *malformed_cases(), *quoted_cases()]
    seen = {said_in(case) for case in older}
    used = {_where(case.get("source", "")) for case in older}
    for case in CORPUS:
        assert case["calls"] or case.get("sees") or "text" in case, f"{case['id']}: no outcome"
        assert not case.get("constructed"), case["id"]
        assert re.match(r"https://github\.com/[^/]+/[^/]+/blob/[0-9a-f]{40}/", case["source"])
        assert said_in(case) not in seen, f"{case['id']} is already in a corpus"
        assert _where(case["source"]) not in used, case["id"]
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_gathered_reply_replays_to_its_exact_outcome(
    case: dict[str, Any], model_server: ScriptedServer, tmp_path: Path
) -> None:
    assert_replays_exactly(case, replay_case(case, model_server, tmp_path))
