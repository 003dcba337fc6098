"""The simulated cluster is a Cluster, reachable through ``connect``, on a virtual clock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from r2act.campaigns import SimTarget
from r2act.cluster.base import Clock, Cluster
from r2act.cluster.connect import connect
from r2act.cluster.sim import SimulatedCluster


def test_simulated_cluster_satisfies_the_cluster_protocol(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster: Cluster = make_cluster()
    assert isinstance(cluster, Cluster)


def test_connect_builds_the_named_seeded_sim_cluster_in_the_workspace(tmp_path: Path) -> None:
    target = SimTarget(kind="sim", seed=7, name="lab")
    cluster = connect(target, namespace="default", workspace=tmp_path, metric_queries={})
    assert isinstance(cluster, SimulatedCluster)
    assert cluster.fingerprint == "sim:lab:seed=7"
    assert (tmp_path / ".sim" / "lab" / "state.json").is_file()


def test_sleep_advances_the_virtual_clock_at_once(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = make_cluster()
    before = cluster.clock.now()
    cluster.clock.sleep(3600)
    assert cluster.clock.now() == before + 3600


def test_a_fresh_cluster_is_healthy_and_passes_preflight(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = make_cluster()
    report = cluster.preflight({"cpu": "rate(container_cpu_usage_seconds_total[1m])"})
    assert report.ok, report.problems()
    health = cluster.health()
    assert health.healthy and health.error_rate < 0.01


def test_the_clock_satisfies_the_clock_protocol(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    assert isinstance(make_cluster().clock, Clock)
