"""Bench: telemetry generation of the simulated cluster, per incident, and its memory.

Usage::

    python bench/sim.py [--incidents N] [--users U]

Runs N incidents the way the collector does (pre 300 s, during 120 s, post 120 s on the
virtual clock, faults cycling through the eight types) on one simulated cluster in a
temporary workspace, and times only the telemetry calls of each incident: logs (fully
consumed), events, metrics (the manifest's default queries), state and chaos status.
Prints the median and worst per-incident time (wall clock and this process's CPU time:
on a shared 2-core machine the wall clock includes waiting for other processes, so the
verdict uses CPU time), the log records per incident, and the peak RSS after the first
few incidents and at the end, so memory growth with the number of incidents is visible.
Target (issue 3): <= 0.2 s per default incident; no growth.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from r2act.campaigns import GlitchRates, Manifest, plan_incidents, render_chaos
from r2act.campaigns.defaults import DEFAULT_QUERIES
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import TimeWindow
from r2act.systems import ONLINE_BOUTIQUE, get_system

LIMIT_S = 0.2


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--incidents", type=int, default=40)
    parser.add_argument("--users", type=int, default=10)
    args = parser.parse_args(argv)
    # Every fault type on up to four of the services its catalogue realises it on (a
    # manifest refuses unrealizable cells, so one manifest per fault type).
    system = get_system("onlineboutique")
    incidents = [
        incident
        for fault in system.fault_types
        for incident in plan_incidents(
            Manifest.model_validate(
                {
                    "name": "bench",
                    "system": system.name,
                    "target": {"kind": "sim"},
                    "services": list(system.services_for(fault)[:4]),
                    "faults": [{"type": fault.value}],
                },
                strict=False,
            )
        )
    ]
    queries = {k: v.replace("$namespace", "default") for k, v in DEFAULT_QUERIES.items()}
    with tempfile.TemporaryDirectory() as tmp:
        cluster = SimulatedCluster(
            Path(tmp),
            users=args.users,
            glitches=GlitchRates(injection_failure=0, metric_gap=0, slow_recovery=0),
        )
        times: list[float] = []
        cpu: list[float] = []
        records: list[int] = []
        early_rss = 0.0
        for index in range(args.incidents):
            incident = incidents[index % len(incidents)]
            spent, lines, cpu_spent = 0.0, 0, 0.0
            start = cluster.clock.now()
            cluster.clock.sleep(300)
            pre = TimeWindow(start, cluster.clock.now())
            ref = cluster.inject(render_chaos(incident, "default", ONLINE_BOUTIQUE))
            cluster.clock.sleep(120)
            during = TimeWindow(pre.end, cluster.clock.now())
            windows = [pre, during]
            t0, c0 = time.perf_counter(), time.process_time()
            cluster.chaos_status(ref)
            spent += time.perf_counter() - t0
            cpu_spent += time.process_time() - c0
            cluster.remove(ref)
            cluster.clock.sleep(120)
            windows.append(TimeWindow(during.end, cluster.clock.now()))
            t0, c0 = time.perf_counter(), time.process_time()
            for window in windows:
                lines += sum(len(batch) for batch in cluster.logs(window))
                cluster.events(window)
                for _ in cluster.metrics(window, queries, 15.0):
                    pass
                cluster.state()
            spent += time.perf_counter() - t0
            cpu_spent += time.process_time() - c0
            times.append(spent)
            cpu.append(cpu_spent)
            records.append(lines)
            if index == 4:
                early_rss = _rss_mib()
        median = statistics.median(cpu)
        print(f"incidents: {len(times)}  users: {args.users}")
        print(f"log records per incident: median {statistics.median(records):,.0f}")
        print(
            f"telemetry per incident, wall: median {statistics.median(times):.3f} s, "
            f"worst {max(times):.3f} s"
        )
        print(
            f"telemetry per incident, CPU:  median {median:.3f} s, worst {max(cpu):.3f} s "
            f"(limit {LIMIT_S} s) -> {'OK' if median <= LIMIT_S else 'TOO SLOW'}"
        )
        print(f"peak RSS after 5 incidents: {early_rss:.0f} MiB; at the end: {_rss_mib():.0f} MiB")
    return 0 if median <= LIMIT_S else 1


if __name__ == "__main__":
    sys.exit(main())
