"""The quoted corpus (tests/agent/fixtures/quoted_replies.yaml): real replies from sources
no other corpus used, and replies that show a call without meaning it (offered, declined,
quoted, illustrated, weighed in the thinking), replayed through the agent core over real HTTP
to their exact outcome — and no call run that nobody meant, on every corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import (
    gathered_cases,
    heldout_cases,
    judge,
    malformed_cases,
    quoted_cases,
    replay_case,
    world_cases,
)
from scripted_server import ScriptedServer
from tests.agent.conftest import assert_replays_exactly, said_in

CORPUS = quoted_cases()
SHOWN = ("offered", "declined", "quoted", "illustrated")


def test_the_corpus_is_real_traced_new_and_holds_shown_calls() -> None:
    real = [case for case in CORPUS if not case.get("constructed")]
    shown = [case for case in CORPUS if case.get("class") in SHOWN]
    assert len(real) >= 40 and len(shown) >= 15
    older = [*world_cases(), *heldout_cases(), *malformed_cases()]
    seen = {said_in(case) for case in older}
    used = {str(case.get("source", "")).split(" (")[0] for case in older}
    for case in CORPUS:
        assert case["calls"] or case.get("sees"), f"{case['id']}: no call and no line"
        assert said_in(case) not in seen, f"{case['id']} is already in a corpus"
        if case.get("constructed"):
            assert case["source"].startswith("constructed"), case["id"]
        else:
            assert case["source"].startswith("https://github.com/"), case["id"]
            assert case["source"].split(" (")[0] not in used, case["id"]
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_reply_replays_to_its_exact_outcome(
    case: dict[str, Any], model_server: ScriptedServer, tmp_path: Path
) -> None:
    assert_replays_exactly(case, replay_case(case, model_server, tmp_path))


@pytest.mark.parametrize(
    "corpus",
    [world_cases, heldout_cases, malformed_cases, quoted_cases, gathered_cases],
    ids=lambda f: f.__name__,
)
def test_no_corpus_runs_a_call_nobody_meant(corpus: Any, tmp_path: Path) -> None:
    misfires: list[str] = []
    for number, case in enumerate(corpus()):
        folder = tmp_path / str(number)
        folder.mkdir()
        with ScriptedServer() as server:
            outcome = replay_case(case, server, folder)
        recovered, _, _ = judge(case, outcome)
        if len(outcome.calls) > recovered:
            misfires.append(case["id"])
    assert misfires == []
