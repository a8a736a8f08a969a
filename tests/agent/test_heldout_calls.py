"""The held-out set of issue 12 (tests/agent/fixtures/heldout_replies.yaml): real replies
collected after the reader was built, from sources the other corpora never used."""

from __future__ import annotations

import re

from bench.bench_corpus import heldout_cases, malformed_cases, world_cases

CORPUS = heldout_cases()


def _said(case: dict) -> str:
    reply = case["reply"]
    return re.sub(r"\s+", "", (reply.get("text") or "") + (reply.get("reasoning") or ""))


def test_the_held_out_set_is_wide_traced_and_new() -> None:
    families = {case["family"].split("-")[0].rstrip("0123456789.") for case in CORPUS}
    assert len(CORPUS) >= 40 and len(families) >= 12
    seen = {_said(case) for case in [*world_cases(), *malformed_cases()]}
    world_sources = {case["source"].split(" (")[0] for case in world_cases()}
    for case in CORPUS:
        assert case["source"].startswith("https://github.com/"), case["id"]
        assert case["source"].split(" (")[0] not in world_sources, case["id"]
        assert case["where"] in ("content", "native", "reasoning")
        assert case["calls"] or case.get("sees"), f"{case['id']}: no call and no line"
        assert _said(case) not in seen, f"{case['id']} is already in a corpus"
    assert len({case["id"] for case in CORPUS}) == len(CORPUS)
