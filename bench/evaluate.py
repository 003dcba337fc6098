"""Time ``evaluate`` (and ``compare``) on 302 incidents with every bootstrap CI (B = 10,000).

Target (DESIGN section 11): evaluating or comparing 302 predictions with all CIs in <= 2 s,
judged on the CPU time of the whole process tree (``cputree``: this process, every thread,
and any child it starts; evaluation starts none today), never on wall time, which a shared
machine inflates. The floor printed beside it is the CPU time of merely parsing the
prediction files, the part no evaluation can skip.
Records come from the paper-scale campaign (campaigns/r2act-302.yaml) labelled by
``r2act.actions``, so their action spaces and plan sets are the real ones; predictions are
synthetic (a noisy diagnoser carried through the fixed mapper, plus some broken lines so the
parser's error paths are part of the measurement).

    .venv/bin/python bench/evaluate.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path

from cputree import TreeSampler, self_cpu_s  # bench/cputree.py

from r2act.actions import map_rca
from r2act.campaigns import load_manifest, plan_incidents
from r2act.evaluation import compare, evaluate, parse_stream
from r2act.quality_gate import planned_record
from r2act.schema import BenchmarkRecord
from r2act.systems import ONLINE_BOUTIQUE, get_system

BUDGET_S = 2.0
MANIFEST = Path(__file__).resolve().parent.parent / "campaigns" / "r2act-302.yaml"


def build_records() -> list[BenchmarkRecord]:
    """The 302 planned incidents of the paper design as benchmark records."""
    manifest = load_manifest(MANIFEST)
    records = []
    for incident in plan_incidents(manifest):
        records.append(planned_record(incident, ONLINE_BOUTIQUE, tool_version="bench"))
    return records


def predictions(records: list[BenchmarkRecord], accuracy: float, seed: int) -> bytes:
    """A JSONL predictions file: right RCA with probability ``accuracy``, mapped to a plan."""
    rng = random.Random(seed)
    services = sorted({r.labels.service for r in records})
    lines = []
    for record in records:
        service, fault = record.labels.service, record.labels.fault_type
        if rng.random() > accuracy:
            service = rng.choice(services)
            fault = rng.choice(list(get_system(ONLINE_BOUTIQUE.system).fault_types))
        plan = map_rca(service, fault, record.action_space, ONLINE_BOUTIQUE)
        line = {
            "incident_id": record.incident_id,
            "rca": {"service": service, "fault_type": fault.value},
            "plan": plan.model_dump(),
            "method": f"noisy-{accuracy:.2f}",
        }
        lines.append(json.dumps(line).encode())
    lines[5] = b'{"incident_id": broken'  # a malformed line
    lines[9] = lines[9].replace(b'"restart_service"', b'"reboot"')  # maybe an unknown op
    return b"\n".join(lines) + b"\n"


def _time(fn: object, repeat: int) -> tuple[float, float]:
    """Median CPU seconds (process tree) and median wall seconds of ``repeat`` calls."""
    cpu, wall = [], []
    for _ in range(repeat):
        sampler = TreeSampler(os.getpid())
        start, start_cpu = time.perf_counter(), self_cpu_s()
        fn()  # type: ignore[operator]
        spent = self_cpu_s() - start_cpu
        cpu.append(spent + sampler.stop().seconds)
        wall.append(time.perf_counter() - start)
    return statistics.median(cpu), statistics.median(wall)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    records = build_records()
    raw_a, raw_b = predictions(records, 0.85, 1), predictions(records, 0.5, 2)

    def evaluate_one() -> None:
        evaluate(records, [parse_stream(io.BytesIO(raw_a), "a.jsonl")])

    def evaluate_two() -> None:
        files = [parse_stream(io.BytesIO(r), n) for r, n in ((raw_a, "a"), (raw_b, "b"))]
        evaluate(records, files)

    def compare_two() -> None:
        a, b = (parse_stream(io.BytesIO(r), n) for r, n in ((raw_a, "a"), (raw_b, "b")))
        compare(records, a, b, by="fault_type")

    report = evaluate(records, [parse_stream(io.BytesIO(raw_a), "a.jsonl")])
    metrics = report.methods[0].metrics
    print(
        f"{len(records)} incidents, B={report.replicates}: RCA-S {metrics['rca_s'].value:.3f}, "
        f"Valid {metrics['valid'].value:.3f}, VC {metrics['vc'].value:.3f}"
    )

    def parse_two() -> None:
        for raw, name in ((raw_a, "a"), (raw_b, "b")):
            parse_stream(io.BytesIO(raw), name)

    floor, _ = _time(parse_two, args.repeat)
    print(f"FLOOR parse 2 files  {floor:6.3f} s CPU (reading the predictions, nothing else)")
    worst = 0.0
    for name, fn in (
        ("evaluate 1 file", evaluate_one),
        ("evaluate 2 files", evaluate_two),
        ("compare A B", compare_two),
    ):
        cpu, wall = _time(fn, args.repeat)
        worst = max(worst, cpu)
        print(
            f"{name:18s} {cpu:6.3f} s CPU ({cpu / BUDGET_S:.2f} of the {BUDGET_S:.0f} s budget, "
            f"{cpu / floor:.1f}x the floor; wall {wall:.3f} s, not judged)"
        )
    ok = worst <= BUDGET_S
    print("PASS" if ok else "FAIL", f"worst {worst:.3f} s CPU <= {BUDGET_S} s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
