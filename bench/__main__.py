"""`python -m bench`: every measurement of the project in one go, one Markdown table.

Each figure stands beside its baseline, measured in the same run on the same machine, and
their ratio: absolute times on a shared machine are noise, ratios are not. `--write` also
saves the table as bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from pathlib import Path

SUITES = (
    "bench.bench_core",
    "bench.bench_tools",
    "bench.bench_lsp",
    "bench.bench_window",
    "bench.bench_window_idle",
    "bench.bench_window_long",
    "bench.bench_corpus",
    "bench.bench_sessions",
    "bench.bench_transport",
)
RESULTS = Path(__file__).with_name("RESULTS.md")


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        total_kb = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {total_kb / 1024 / 1024:.0f} GiB"
    except (OSError, ValueError, IndexError):
        pass
    return (
        f"{cpu}, {os.cpu_count()} cores{memory}; {platform.system()} {platform.release()}; "
        f"Python {platform.python_version()}"
    )


def fmt(value: float, unit: str) -> str:
    return f"{value:,.2f} {unit}" if abs(value) < 1000 else f"{value:,.0f} {unit}"


def table(rows: list[dict]) -> str:
    lines = [
        "| suite | measurement | value | baseline | ratio | aim |",
        "|---|---|---:|---:|---:|---|",
    ]
    for row in rows:
        verdict = {None: "", True: " PASS", False: " FAIL"}[row["met"]]
        lines.append(
            f"| {row['suite']} | {row['name']} | {fmt(row['value'], row['unit'])} | "
            f"{fmt(row['baseline'], row['unit'])} | {row['ratio']:.2f}× | {row['aim']}{verdict} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--write", action="store_true", help="also write bench/RESULTS.md")
    parser.add_argument("--only", help="run only the suites whose name contains this")
    args = parser.parse_args(argv)
    started = time.monotonic()
    rows: list[dict] = []
    failures: list[str] = []
    for name in SUITES:
        if args.only and args.only not in name:
            continue
        print(f"running {name} …", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(name)
            suite_rows = module.run()
        except Exception as exc:  # one broken suite must not hide the others' figures
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
            continue
        rows += [{"suite": name.removeprefix("bench.bench_"), **row} for row in suite_rows]
    elapsed = time.monotonic() - started
    report = (
        "\n".join(
            [
                "# mm-tui benchmarks",
                "",
                f"Machine: {machine()}.",
                f"Run: `python -m bench` on {time.strftime('%Y-%m-%d')}, {elapsed:.0f} s in all.",
                "Each ratio is the figure over its baseline, both measured in this run.",
                "",
                table(rows),
                "",
                *(f"- suite failed: {failure}" for failure in failures),
            ]
        ).rstrip()
        + "\n"
    )
    print(report)
    if args.write:
        RESULTS.write_text(report, encoding="utf-8")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
