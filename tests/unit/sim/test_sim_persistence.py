"""History and persistence: counters stay cumulative, and disk never lags a finished call."""

from __future__ import annotations

from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import TimeWindow

from .conftest import NO_GLITCHES, chaos, incident, memory_stress

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
    ref = sim.inject(memory_stress("cartservice"))  # one group OOM kill: the pod survives
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


def test_a_removal_whose_save_was_interrupted_is_persisted_by_the_next_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act.cluster.sim import cluster as sim_cluster

    sim = SimulatedCluster(tmp_path, seed=3, glitches=NO_GLITCHES)
    ref = sim.inject(chaos(incident("cartservice", "network_delay")))
    real_save = sim_cluster.save_state

    def interrupted_save(*args: object, **kwargs: object) -> None:
        monkeypatch.setattr(sim_cluster, "save_state", real_save)
        raise KeyboardInterrupt

    monkeypatch.setattr(sim_cluster, "save_state", interrupted_save)
    with pytest.raises(KeyboardInterrupt):
        sim.remove(ref)
    # the disk still holds the object; the cleanup retry must not take memory's word for it
    assert SimulatedCluster(tmp_path, seed=3).leftovers() != []
    sim.remove(ref)
    assert SimulatedCluster(tmp_path, seed=3).leftovers() == []
