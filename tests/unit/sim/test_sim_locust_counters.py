"""Locust's stats table is cumulative since the load started: a fault's failures stay counted.

Every request row and the ``Aggregated`` row only ever grow, across the pre, during and post
windows of an incident and past the history's pruning (``loadgen.settle`` keeps what failed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from itertools import pairwise
from pathlib import Path

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.loadgen import locust_table
from r2act.cluster.sim.scene import RouteView, Scene
from r2act.cluster.sim.state import RETENTION_S
from r2act.schema import PLAN_ADAPTER, LogLine, NoiseLevel, TimeWindow, Topology
from r2act.systems import ONLINE_BOUTIQUE
from r2act.systems.render import NO_TRACES, TraceIds

from .conftest import DURING_S, NO_GLITCHES, SETTLE_S, chaos, incident

ROW = re.compile(r"^(GET|POST)?\s+(\S+)\s+(\d+)\s+(\d+)\(")
PRE_S = 60.0


def _tables(cluster: SimulatedCluster, window: TimeWindow) -> list[dict[str, tuple[int, int]]]:
    """Each stats table the load generator printed in ``window``: row -> (reqs, fails)."""
    by_ts: dict[float, dict[str, tuple[int, int]]] = {}
    for batch in cluster.logs(window):
        for line in batch:
            if line.service != cluster.topology.load_generator:
                continue
            found = ROW.match(line.line)
            if found:
                name = f"{found[1] or ''} {found[2]}".strip()
                by_ts.setdefault(line.ts, {})[name] = (int(found[3]), int(found[4]))
    return [by_ts[ts] for ts in sorted(by_ts)]


def _grow(tables: list[dict[str, tuple[int, int]]]) -> None:
    """Every row's counters are non-decreasing from one table to the next."""
    for before, after in pairwise(tables):
        for row, (reqs, fails) in after.items():
            old_reqs, old_fails = before.get(row, (0, 0))
            assert reqs >= old_reqs and fails >= old_fails, (row, before.get(row), after[row])


def _incident_tables(
    tmp_path: Path, service: str, fault: str, noise: NoiseLevel
) -> tuple[SimulatedCluster, dict[str, list[dict[str, tuple[int, int]]]]]:
    """An incident's pre, during and post tables, read as the collector reads them."""
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES, noise=noise)
    clock = cluster.clock
    start = clock.now()
    clock.sleep(PRE_S)
    pre = TimeWindow(start, clock.now())
    phases = {"pre": _tables(cluster, pre)}
    ref = cluster.inject(chaos(incident(service, fault)))
    clock.sleep(SETTLE_S)
    begin = clock.now()
    clock.sleep(DURING_S)
    phases["during"] = _tables(cluster, TimeWindow(begin, clock.now()))
    cluster.remove(ref)
    clock.sleep(90.0)
    begin = clock.now()
    clock.sleep(PRE_S)
    phases["post"] = _tables(cluster, TimeWindow(begin, clock.now()))
    return cluster, phases


def test_a_faults_failures_stay_counted_after_it(tmp_path: Path) -> None:
    for fault in ("pod_failure", "dns_fault"):  # a Chaos Mesh fault and a ConfigFault
        _, phases = _incident_tables(tmp_path / fault, "cartservice", fault, NoiseLevel.NONE)
        pre, during, post = phases["pre"], phases["during"], phases["post"]
        assert pre and during and post
        _grow(pre + during + post)
        assert pre[-1]["Aggregated"][1] == 0, "no noise: a healthy baseline fails nothing"
        assert during[-1]["Aggregated"][1] > 0, f"{fault}: the users' requests fail"
        assert post[-1]["Aggregated"][1] >= during[-1]["Aggregated"][1]


def test_the_counters_outlive_the_pruned_history(tmp_path: Path) -> None:
    """Over an hour later the fault's records are pruned, its failures still counted."""
    cluster, phases = _incident_tables(tmp_path, "cartservice", "pod_failure", NoiseLevel.REALISTIC)
    _grow(phases["pre"] + phases["during"] + phases["post"])
    counted = phases["post"][-1]
    # New pods, then over an hour: the next save prunes the fault's pods and its record.
    cluster.apply_plan(
        PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "cartservice"})
    )
    cluster.clock.sleep(RETENTION_S + 600.0)
    cluster.inject(chaos(incident("checkoutservice", "cpu_saturation")))
    assert not any(rec.kind == "PodChaos" for rec in cluster._state.chaos)
    now = cluster.clock.now()
    later = _tables(cluster, TimeWindow(now - 30.0, now))
    assert later
    _grow([counted, *later])
    # A reopened cluster (another process) reads the same counters from the saved state.
    again = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES, noise=NoiseLevel.REALISTIC)
    assert _tables(again, TimeWindow(now - 30.0, now)) == later


@dataclass
class _Logger:
    """A load-generator pod as ``locust_table`` reads it (``render.PodIdentity``)."""

    topology: Topology = ONLINE_BOUTIQUE
    pod: str = "loadgenerator-0"
    app: str = "loadgenerator"
    container: str = "main"
    seed: int = 3
    sessions: list[str] = field(default_factory=list)
    route_ms: dict[str, float] = field(default_factory=dict)
    node: str = "0" * 12
    traces: TraceIds = NO_TRACES


def _scene(rate: float, fail: float, noise: NoiseLevel) -> Scene:
    routes = {r.scope: RouteView(rate=rate, fail=fail) for r in ONLINE_BOUTIQUE.routes}
    return Scene(
        t=0.0, services={}, routes=routes, received={}, served={}, call_errors={},
        timelines={}, noise=noise,
    )  # fmt: skip


def _table(logger: _Logger, scene: Scene, ticks: list[float]) -> list[str]:
    out: list[LogLine] = []
    locust_table(logger, scene, ticks, 1e9, out, failed=lambda _s, _t: {"/": 40.0})
    return [line.line for line in out]


def test_a_table_follows_its_scene_whatever_came_before() -> None:
    """A table reuses the entries of the previous piece of its stretch (same logger, same
    scene's routes); one in another scene, at another noise level, or of a restarted load
    generator prints what a first table would."""
    logger = _Logger()
    calm, failing = _scene(2.0, 0.0, NoiseLevel.HEAVY), _scene(30.0, 0.4, NoiseLevel.HEAVY)
    quiet = replace(failing, noise=NoiseLevel.NONE)
    ticks = [1e9 + 5e4 + 2.0 * k for k in range(5)]
    later = [t + 10.0 for t in ticks]
    asked = [(calm, ticks), (replace(calm, t=1.0), later), (failing, later), (quiet, later)]
    tables = [_table(logger, scene, at) for scene, at in asked]
    assert tables == [_table(_Logger(), scene, at) for scene, at in asked]  # fresh: no memo
    assert len({tuple(t) for t in tables}) == 4
    assert tables[2] != tables[3]  # the resets at HEAVY are not those at NONE
    restarted = _Logger(pod="loadgenerator-1")
    assert _table(restarted, failing, later) != tables[2]  # another pod: its own resets
