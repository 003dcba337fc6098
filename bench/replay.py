"""Time ``replay`` of 302 predictions on the simulated cluster, and show what it found.

Target (DESIGN section 11, issue "Live replay"): replaying 302 predictions on the simulated
cluster in <= 60 s here, with early exit on sustained health; judged on the CPU time of the
whole process tree (``cputree``; replay on the simulated cluster starts no other process),
never on wall time. What it compares against is that budget, printed with the figure, and
the CPU per prediction. Records come from a built
dataset (``--dataset DIR``) or, without one, from the paper-scale campaign labelled by the
default policy (the same records ``bench/evaluate.py`` uses). Predictions are the gold plans
unless a predictions file is given.

    .venv/bin/python bench/replay.py [--dataset DIR] [--predictions FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from cputree import TreeSampler, self_cpu_s  # bench/cputree.py
from evaluate import build_records  # bench/evaluate.py: the paper-scale records

from r2act.campaigns import GlitchRates
from r2act.cluster.sim import SimulatedCluster
from r2act.datasets import load_records
from r2act.evaluation import parse_stream
from r2act.evaluation.predictions import read_predictions
from r2act.replay import ReplaySettings, run_replay, summarize
from r2act.schema import BenchmarkRecord

BUDGET_S = 60.0


def _gold_predictions(records: list[BenchmarkRecord]) -> bytes:
    lines = [
        json.dumps(
            {
                "incident_id": r.incident_id,
                "rca": {"service": r.labels.service, "fault_type": r.labels.fault_type.value},
                "plan": r.gold_plan.model_dump(mode="json"),
                "method": "gold",
            }
        )
        for r in records
    ]
    return ("\n".join(lines) + "\n").encode()


def main() -> int:
    """Run the benchmark and print its figures; exit 1 when over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", type=Path, help="dataset directory (default: plan-built)")
    parser.add_argument("--predictions", type=Path, help="predictions file (default: gold)")
    args = parser.parse_args()
    records = load_records(args.dataset) if args.dataset else build_records()
    if args.predictions:
        predictions = read_predictions(args.predictions)
    else:
        predictions = parse_stream(io.BytesIO(_gold_predictions(records)), source="gold")
    with tempfile.TemporaryDirectory() as tmp:
        sim = SimulatedCluster(
            Path(tmp),
            name="bench-replay",
            seed=302,
            glitches=GlitchRates(injection_failure=0, metric_gap=0, slow_recovery=0),
        )
        sampler = TreeSampler(os.getpid())
        started, cpu0 = time.perf_counter(), self_cpu_s()
        run = run_replay(
            sim,
            {r.incident_id: r for r in records},
            predictions,
            Path(tmp) / "out",
            ReplaySettings(),
        )
        elapsed = time.perf_counter() - started
        cpu = self_cpu_s() - cpu0 + sampler.stop().seconds
    report = summarize(run.outcomes)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    total = next(row for row in report.rows if row.fault_type == "all")
    a = report.agreement
    print(
        f"predictions replayed: {len(run.outcomes)} in {cpu:.1f} s CPU "
        f"({1000 * cpu / max(len(run.outcomes), 1):.0f} ms each), budget {BUDGET_S:.0f} s CPU; "
        f"wall {elapsed:.1f} s (not judged); peak RSS {peak:.2f} GiB"
    )
    print(
        f"recovered {total.recovered}/{total.planned}; gated {total.gated_recovered}; "
        f"refused {report.refused}; no effect {report.no_effect}; errors {report.errors}; "
        f"median TTR {report.ttr_median_s} s"
    )
    print(
        f"agreement: valid&recovered {a.valid_recovered}, valid&not {a.valid_not_recovered}, "
        f"invalid&recovered {a.invalid_recovered}, invalid&not {a.invalid_not_recovered}"
    )
    for row in report.rows:
        print(
            f"  {row.fault_type:16s} planned {row.planned:3d} valid {row.offline_valid:3d} "
            f"recovered {row.recovered:3d} gated {row.gated_recovered:3d}"
        )
    ok = cpu <= BUDGET_S
    print("PASS" if ok else "FAIL", f"{cpu:.1f} s CPU <= {BUDGET_S:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
