"""Cumulative counters stay cumulative however much simulated time passes."""

from __future__ import annotations

from pathlib import Path

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import TimeWindow

from .conftest import NO_GLITCHES, chaos, incident

RESTARTS = {"restarts": 'kube_pod_container_status_restarts_total{namespace="default"}'}


def _restarts(sim: SimulatedCluster, app: str) -> dict[str, float]:
    now = sim.clock.now()
    out: dict[str, float] = {}
    for series in sim.metrics(TimeWindow(now - 60, now), RESTARTS, 15):
        if series.labels.get("pod", "").startswith(app) and series.points:
            out[series.labels["pod"]] = series.points[-1][1]
    return out


def test_restart_counter_of_a_surviving_pod_never_decreases(tmp_path: Path) -> None:
    sim = SimulatedCluster(tmp_path, seed=3, glitches=NO_GLITCHES)
    ref = sim.inject(chaos(incident("cartservice", "memory_pressure", "severe", 2)))
    sim.clock.sleep(300)
    sim.remove(ref)
    sim.clock.sleep(300)
    after_fault = _restarts(sim, "cartservice")
    assert after_fault and max(after_fault.values()) > 0
    sim.clock.sleep(3 * 3600)
    other = sim.inject(chaos(incident("frontend", "pod_failure")))  # history is pruned here
    sim.clock.sleep(10)
    sim.remove(other)
    later = _restarts(sim, "cartservice")
    assert later == after_fault
