"""What every bench shares: timing a function, and the row of a figure beside its baseline."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def median_ms(action: Callable[[], object], repeats: int) -> float:
    """The median wall time of `action`, in milliseconds, after one warm-up run."""
    action()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def row(
    name: str,
    value: float,
    baseline: float,
    *,
    unit: str = "ms",
    max_ratio: float | None = None,
    max_value: float | None = None,
    max_excess: float | None = None,
) -> dict[str, Any]:
    """One figure beside its baseline from the same run; the aim, when there is one, is on
    the ratio (`max_ratio`), on the figure itself (`max_value`, in `unit`), or on how far the
    figure may exceed its baseline (`max_excess`, in `unit`). A figure that could not be
    measured (NaN, infinite) misses its aim."""
    ratio = round(value / baseline, 2) if baseline else float("inf")
    aim, met = "", None
    if max_ratio is not None:
        aim, met = f"≤ {max_ratio:g}×", ratio <= max_ratio
    elif max_value is not None:
        aim, met = f"< {max_value:g} {unit}", value < max_value
    elif max_excess is not None:
        aim, met = f"≤ baseline + {max_excess:g} {unit}", value - baseline <= max_excess
    return {
        "name": name,
        "value": round(value, 2),
        "baseline": round(baseline, 2),
        "ratio": ratio,
        "unit": unit,
        "aim": aim,
        "met": met,
    }


def print_rows(rows: list[dict[str, Any]]) -> None:
    """The rows as plain lines, for running one bench module alone."""
    for r in rows:
        verdict = "" if r["met"] is None else (" PASS" if r["met"] else " FAIL")
        aim = f"  aim {r['aim']}{verdict}" if r["aim"] else ""
        print(
            f"{r['name']}: {r['value']} {r['unit']} vs {r['baseline']} {r['unit']} "
            f"({r['ratio']}x){aim}"
        )
