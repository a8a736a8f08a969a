"""Every malformed reply recorded from the trackers of Ollama, llama.cpp, vLLM and LM Studio
(tests/agent/fixtures/malformed_replies.yaml) replays to its exact outcome:
the calls that ran, by name and arguments, and for a reply with no trustworthy call the exact
line the person sees. The replay is bench/bench_corpus.py's, so the bench measures the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.bench_corpus import expected_calls, judge, malformed_cases, replay_case
from scripted_server import ScriptedServer

CORPUS = malformed_cases()


@pytest.mark.parametrize("case", CORPUS, ids=[c["id"] for c in CORPUS])
def test_a_recorded_malformed_reply_replays_to_its_exact_outcome(
    case: dict[str, Any], model_server: ScriptedServer, tmp_path: Path
) -> None:
    outcome = replay_case(case, model_server, tmp_path)

    assert not outcome.crashed
    assert outcome.calls == expected_calls(case)
    if "sees" in case:
        assert case["sees"] in outcome.lines
    recovered, expected, exact = judge(case, outcome)
    assert (recovered, exact) == (expected, True)


def test_every_case_states_its_exact_outcome() -> None:
    for case in CORPUS:
        assert "calls" in case, case["id"]
        assert case["expect"] == ("call" if case["calls"] else "error") or "sees" in case
        assert case["calls"] or case.get("sees"), f"{case['id']}: no call and no line"
