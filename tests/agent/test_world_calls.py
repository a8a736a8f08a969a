"""The replies of many model families (tests/agent/fixtures/
world_replies.yaml) replay to their exact outcome through the agent core over real HTTP: the
calls that run, by name and arguments and in order, the text the person sees, or for a reply
with no call the exact line shown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import replay_case, world_cases
from scripted_server import ScriptedServer
from tests.agent.conftest import assert_replays_exactly

CORPUS = world_cases()


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_collected_reply_replays_to_its_exact_outcome(
    case: dict[str, Any], model_server: ScriptedServer, tmp_path: Path
) -> None:
    assert_replays_exactly(case, replay_case(case, model_server, tmp_path))


def test_the_corpus_is_wide_and_traced() -> None:
    families = {case["family"].split("-")[0].rstrip("0123456789.") for case in CORPUS}
    assert len(CORPUS) >= 60 and len(families) >= 12
    for case in CORPUS:
        assert case["source"].startswith("https://github.com/"), case["id"]
        assert case["where"] in ("content", "native", "reasoning")
        assert case["calls"] or case.get("sees"), f"{case['id']}: no call and no line"
