"""Bench: collect campaigns/r2act-302.yaml on the simulated cluster into a temporary directory.

Budget (DESIGN section 11): at most 2 minutes and 1.5 GiB peak RSS on this 2-core machine.
Prints incidents/s, log records/s and the share of wall time spent outside telemetry
generation (inside cluster reads), which is the collector's own overhead: encoding,
compression, Parquet, journals and renames.

    .venv/bin/python bench/collect.py [--limit N] [--profile] [--keep DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import tempfile
import time
from pathlib import Path

from r2act.collector import collect, plan_collection

REPO = Path(__file__).resolve().parent.parent
BUDGET_S = 120.0
BUDGET_RSS_GIB = 1.5


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Run the bench; exit 1 when over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", type=Path, default=REPO / "campaigns" / "r2act-302.yaml")
    parser.add_argument("--limit", type=int, default=0, help="collect only the first N incidents")
    parser.add_argument("--profile", action="store_true", help="print the top cProfile entries")
    parser.add_argument("--keep", type=Path, help="collect into this directory and keep it")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    plan = plan_collection(args.campaign)
    if args.limit:
        plan = plan_collection(args.campaign, [i.incident.id for i in plan.items[: args.limit]])
    with tempfile.TemporaryDirectory(prefix="r2act-bench-") as tmp:
        run_dir = args.keep or Path(tmp) / "run"
        profiler = cProfile.Profile() if args.profile else None
        start = time.perf_counter()
        if profiler:
            profiler.enable()
        cpu_before, main_before = _cpu_s(), time.thread_time()
        summary = collect(plan, run_dir)
        cpu, main_cpu = _cpu_s() - cpu_before, time.thread_time() - main_before
        if profiler:
            profiler.disable()
        wall = time.perf_counter() - start
        size = sum(p.stat().st_size for p in run_dir.rglob("*") if p.is_file())
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    n = len(summary.results)
    print(f"campaign            {plan.manifest.name} ({n} incidents collected)")
    print(f"completed / failed  {summary.completed} / {summary.failed}")
    print(f"wall time           {wall:.1f} s (budget {BUDGET_S:.0f} s)")
    print(f"incidents/s         {n / wall:.2f}")
    print(f"log records         {summary.log_records:,} ({summary.log_records / wall:,.0f}/s)")
    print(f"raw store size      {size / 2**20:,.0f} MiB")
    print(f"generation time     {summary.generation_s:.1f} s (inside cluster reads)")
    print(f"outside generation  {1 - summary.generation_s / wall:.1%} of wall time (wall)")
    print(f"CPU time            {cpu:.1f} s (this process, all threads)")
    print(f"main-thread CPU     {main_cpu:.1f} s (the rest is the gzip thread)")
    print(f"generation CPU      {summary.generation_cpu_s:.1f} s")
    print(f"outside generation  {1 - summary.generation_cpu_s / cpu:.1%} of CPU time")
    print(f"load average        {load_before:.1f} before the run on {os.cpu_count()} cores")
    print(f"peak RSS            {peak_gib:.2f} GiB (budget {BUDGET_RSS_GIB} GiB)")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    scale = len(plan_collection(args.campaign).items) / max(n, 1)
    ok = wall * scale <= BUDGET_S and peak_gib <= BUDGET_RSS_GIB
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
