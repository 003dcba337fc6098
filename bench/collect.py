"""Bench: collect campaigns/r2act-302.yaml on the simulated cluster into a temporary directory.

Budget (DESIGN section 11): at most 2 minutes and 1.5 GiB peak RSS on this 2-core machine.
Prints incidents/s, log records/s and the share of wall time spent outside telemetry
generation (inside cluster reads), which is the collector's own overhead: encoding,
compression, Parquet, journals and renames.

With ``--lanes 1 2 4 8`` it collects the campaign once per lane count (issue 16) and reports,
per count: wall and CPU time (lane processes included), the virtual wall-clock (the busiest
lane's cluster time: what a real run would take), and whether the raw store equals the
first count's (same complete incidents, byte-identical observation files). Pass/fail on a
shared machine is decided on ratios of one run: the virtual wall-clock of N lanes within
15% of the busiest lane's share (ceil(incidents / N) over incidents), identical data, and the
CPU time of two lanes at most 1.25x one lane's (lane processes included), so that on two
idle cores two lanes take about CPU / 2, i.e. <= 0.6x one lane's wall time.

Collection stops a full cell (``collector.rounds``): it prints the spares taken and skipped,
the CPU time spent judging incidents with the gate's per-incident verdict, and the share of
incidents the gate rejected. ``--all-spares`` collects every spare, as before the rule.

    .venv/bin/python bench/collect.py [--limit N] [--profile] [--keep DIR] [--lanes 1 2 4 8]
                                      [--all-spares]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import os
import pstats
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import yaml

from r2act.collector import collect, layout, plan_collection

REPO = Path(__file__).resolve().parent.parent
BUDGET_S = 120.0
BUDGET_RSS_GIB = 1.5
LANE_CPU_RATIO = 1.25
LANE_CLOCK_TOLERANCE = 0.15
PROVENANCE = {layout.INCIDENT_JSON, layout.JOURNAL, layout.COMPLETE}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> int:
    """Run the bench; exit 1 when over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", type=Path, default=REPO / "campaigns" / "r2act-302.yaml")
    parser.add_argument("--limit", type=int, default=0, help="collect only the first N incidents")
    parser.add_argument("--profile", action="store_true", help="print the top cProfile entries")
    parser.add_argument("--keep", type=Path, help="collect into this directory and keep it")
    parser.add_argument("--lanes", type=int, nargs="+", help="lane counts to compare (1 2 4 8)")
    parser.add_argument(
        "--all-spares", action="store_true", help="collect every spare, even of full cells"
    )
    args = parser.parse_args()
    if args.lanes:
        return _lanes(args.campaign, args.lanes, args.limit, args.keep)

    load_before = os.getloadavg()[0]
    plan = plan_collection(args.campaign)
    if args.limit:
        plan = plan_collection(args.campaign, [i.incident.id for i in plan.items[: args.limit]])
    if args.all_spares:
        plan = replace(plan, stop_full_cells=False, judge=False)
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
    if summary.spares is not None:
        spares = summary.spares
        print(
            f"spares              {spares.taken} of {spares.planned} collected, "
            f"{spares.not_needed} skipped (cell full), {len(spares.short)} cells short"
        )
    judged = [r for r in summary.results if r.clean is not None]
    if judged:
        rejected = sum(not r.clean for r in judged)
        print(f"judging CPU         {summary.judge_cpu_s:.1f} s ({summary.judge_cpu_s / cpu:.1%})")
        print(f"gate rejected       {rejected} of {len(judged)} ({rejected / len(judged):.1%})")
    print(f"load average        {load_before:.1f} before the run on {os.cpu_count()} cores")
    print(f"peak RSS            {peak_gib:.2f} GiB (budget {BUDGET_RSS_GIB} GiB)")
    if profiler:
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
    scale = len(plan_collection(args.campaign).items) / max(n, 1) if args.limit else 1.0
    ok = wall * scale <= BUDGET_S and peak_gib <= BUDGET_RSS_GIB
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


def _digest(run_dir: Path) -> dict[str, str]:
    """Per complete incident: SHA-256 over its observation files (not incident.json/journal)."""
    out = {}
    for incident in sorted(layout.raw_dir(run_dir).iterdir()):
        if not layout.is_complete(incident):
            continue
        digest = hashlib.sha256()
        for path in sorted(incident.rglob("*")):
            if path.is_file() and path.name not in PROVENANCE:
                digest.update(path.relative_to(incident).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
        out[incident.name] = digest.hexdigest()
    return out


def _lanes(campaign: Path, counts: list[int], limit: int, keep: Path | None) -> int:
    from r2act.campaigns.estimate import format_duration
    from r2act.collector.lanes import collect_lanes

    data = yaml.safe_load(campaign.read_text())
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="r2act-bench-lanes-") as tmp:
        root = keep or Path(tmp)
        reference: dict[str, str] | None = None
        for count in counts:
            data["target"]["lanes"] = count
            manifest = root / f"lanes-{count}.yaml"
            manifest.write_text(yaml.safe_dump(data, sort_keys=False))
            plan = plan_collection(manifest)
            if limit:
                plan = plan_collection(manifest, [i.incident.id for i in plan.items[:limit]])
            run = root / f"run-{count}"
            load = os.getloadavg()[0]
            cpu0, kids0, wall0 = _cpu_s(), _children_cpu_s(), time.perf_counter()
            done = collect_lanes(plan, run)
            wall = time.perf_counter() - wall0
            cpu = _cpu_s() - cpu0 + _children_cpu_s() - kids0
            digest = _digest(run)
            reference = reference if reference is not None else digest
            # the busiest lane's share, round after round (a round waits for the previous one)
            per_lane = sum(-(-len(ids) // count) for ids in done.rounds)
            rows.append(
                (
                    count,
                    wall,
                    cpu,
                    done.cluster_s,
                    per_lane,
                    digest == reference,
                    load,
                    done.summary.completed,
                )
            )
    base = rows[0]
    print(f"campaign {campaign.name}: {base[7]} incidents per lane count")
    print("lanes  wall s   CPU s  CPU/1   virtual wall-clock   ratio  ideal  same data  load")
    for count, wall, cpu, clock, per_lane, same, load, _ in rows:
        ratio, ideal = clock / base[3], per_lane / base[4]
        cpu_ratio = cpu / base[2]
        fine = same and abs(ratio - ideal) <= LANE_CLOCK_TOLERANCE * ideal
        fine = fine and (count != 2 or cpu_ratio <= LANE_CPU_RATIO)  # two lanes on two cores
        ok = ok and fine
        print(
            f"{count:5d}  {wall:6.1f}  {cpu:6.1f}  {cpu_ratio:5.2f}  {format_duration(clock):>19}"
            f"  {ratio:5.3f}  {ideal:5.3f}  {'yes' if same else 'NO':>9}  {load:4.1f}"
            f"{'' if fine else '  <- FAIL'}"
        )
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
