"""The held-out set of replies (tests/agent/fixtures/heldout_replies.yaml): real replies
collected after the reader was built, from sources the other corpora never used, replayed
through the agent core over real HTTP to their exact outcome. (Since the reader was then mended
for the classes they exposed, passing here is no longer a held-out result: bench/RESULTS.md.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import (
    heldout_cases,
    malformed_cases,
    replay_case,
    world_cases,
)
from scripted_server import ScriptedServer
from tests.agent.conftest import assert_replays_exactly, said_in

CORPUS = heldout_cases()


def test_the_held_out_set_is_wide_traced_and_new() -> None:
    families = {case["family"].split("-")[0].rstrip("0123456789.") for case in CORPUS}
    assert len(CORPUS) >= 40 and len(families) >= 12
    seen = {said_in(case) for case in [*world_cases(), *malformed_cases()]}
    world_sources = {case["source"].split(" (")[0] for case in world_cases()}
    for case in CORPUS:
        assert case["source"].startswith("https://github.com/"), case["id"]
        assert case["source"].split(" (")[0] not in world_sources, case["id"]
        assert case["where"] in ("content", "native", "reasoning")
        assert case["calls"] or case.get("sees"), f"{case['id']}: no call and no line"
        assert said_in(case) not in seen, f"{case['id']} is already in a corpus"
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_held_out_reply_replays_to_its_exact_outcome(
    case: dict[str, Any], model_server: ScriptedServer, tmp_path: Path
) -> None:
    assert_replays_exactly(case, replay_case(case, model_server, tmp_path))
