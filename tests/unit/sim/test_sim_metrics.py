"""Metric series under their real names, labels and rate semantics, from the same scenes."""

from __future__ import annotations

from collections.abc import Callable

from r2act.campaigns import GlitchRates
from r2act.campaigns.defaults import DEFAULT_QUERIES
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import MetricSeries, TimeWindow

from .conftest import Run, incident

MakeCluster = Callable[..., SimulatedCluster]
QUERIES = {k: v.replace("$namespace", "default") for k, v in DEFAULT_QUERIES.items()}


def _window(cluster: SimulatedCluster, seconds: float = 300) -> TimeWindow:
    start = cluster.clock.now()
    cluster.clock.sleep(seconds)
    return TimeWindow(start, cluster.clock.now())


def _series(cluster: SimulatedCluster, window: TimeWindow, promql: str) -> list[MetricSeries]:
    return list(cluster.metrics(window, {"q": promql}, 15.0))


def test_default_queries_answer_with_per_container_series_at_the_step(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster()
    window = _window(cluster)
    series = list(cluster.metrics(window, QUERIES, 15.0))
    assert {s.query for s in series} == set(QUERIES) - {"last_terminated_reason"}
    cpu = [s for s in series if s.query == "cpu_usage"]
    assert len(cpu) == 12
    cadvisor = {"namespace", "pod", "container", "id", "image", "name"}
    target = {"endpoint", "instance", "job", "metrics_path", "node", "service"}
    for s in cpu:
        assert set(s.labels) == cadvisor | target  # as the kubelet's cAdvisor is scraped
        assert s.labels["namespace"] == "default" and s.labels["job"] == "kubelet"
        assert s.labels["id"].endswith(f"cri-containerd-{s.labels['name']}.scope")
        assert [t % 15 for t, _ in s.points] == [0.0] * len(s.points)
        assert len(s.points) == 21
    network = [s for s in series if s.query == "network_receive"]
    assert all(set(s.labels) == {"namespace", "pod"} for s in network)
    limits = [s for s in series if s.query == "memory_limit"]
    assert {s.labels["resource"] for s in limits} == {"memory"}
    assert all(
        {"uid", "node", "container", "unit"} <= set(s.labels) for s in limits
    )  # kube-state-metrics names the pod's uid and, for resources, its node


def test_pod_level_kube_state_series_have_no_container_and_every_value(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster()
    window = _window(cluster, 60)
    phase = _series(cluster, window, 'kube_pod_status_phase{pod=~"frontend-.*"}')
    assert sorted(s.labels["phase"] for s in phase) == sorted(
        ["Pending", "Running", "Succeeded", "Failed", "Unknown"]
    )
    assert all("container" not in s.labels and "uid" in s.labels for s in phase)
    assert {s.labels["phase"]: s.points[-1][1] for s in phase}["Running"] == 1.0
    assert sum(s.points[-1][1] for s in phase) == 1.0
    ready = _series(cluster, window, 'kube_pod_status_ready{pod=~"frontend-.*"}')
    assert {s.labels["condition"]: s.points[-1][1] for s in ready} == {
        "true": 1.0,
        "false": 0.0,
        "unknown": 0.0,
    }


def test_a_restarted_container_is_a_new_series_and_a_dead_one_goes_stale(
    make_cluster: MakeCluster,
) -> None:
    """cAdvisor series belong to a container instance: after an OOM kill the counter
    starts again in a new series, and while the container waits out its back-off it has
    none (stale), instead of a made-up constant."""
    run = Run(make_cluster(), incident("cartservice", "memory_pressure"))
    cpu = _series(
        run.cluster, run.during, 'container_cpu_usage_seconds_total{pod=~"cartservice-.*"}'
    )
    assert len({s.labels["name"] for s in cpu}) >= 2
    assert all(len(s.labels["name"]) == 64 for s in cpu)
    assert min(s.points[0][1] for s in cpu) < 1.0  # a fresh instance counts from zero
    memory = _series(
        run.cluster, run.during, 'container_memory_working_set_bytes{pod=~"cartservice-.*"}'
    )
    steps = {t for s in memory for t, _ in s.points}
    full = {t for t in range(int(run.during.start // 15 + 1) * 15, int(run.during.end) + 1, 15)}
    assert steps < full  # the back-off intervals have no sample
    assert min(v for s in memory for _, v in s.points) > 5e6


def test_rate_gives_per_second_values_and_the_raw_counter_grows(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    window = _window(cluster)
    rate = _series(
        cluster, window, 'rate(container_cpu_usage_seconds_total{pod=~"frontend-.*"}[1m])'
    )
    counter = _series(cluster, window, 'container_cpu_usage_seconds_total{pod=~"frontend-.*"}')
    assert len(rate) == len(counter) == 1
    assert all(0 < v < 0.2 for _, v in rate[0].points)
    values = [v for _, v in counter[0].points]
    assert values == sorted(values) and values[0] > 100


def test_sum_by_groups_and_unknown_metrics_give_nothing(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    window = _window(cluster, 60)
    total = _series(cluster, window, "sum(rate(container_cpu_usage_seconds_total[1m]))")
    assert len(total) == 1 and total[0].labels == {}
    assert _series(cluster, window, "up{job='nothing'}") == []
    assert _series(cluster, window, "container_made_up_metric_total") == []


def test_pod_failure_shows_in_readiness_availability_and_restarts(
    make_cluster: MakeCluster,
) -> None:
    run = Run(make_cluster(), incident("paymentservice", "pod_failure"))
    available = _series(run.cluster, run.during, "kube_deployment_status_replicas_available")
    payment = next(s for s in available if s.labels["deployment"] == "paymentservice")
    assert payment.points[-1][1] == 0.0
    before = _series(run.cluster, run.pre, "kube_deployment_status_replicas_available")
    assert all(v == 1.0 for s in before for _, v in s.points)
    ready = _series(run.cluster, run.during, 'kube_pod_container_status_ready{pod=~"payment.*"}')
    assert ready[0].points[-1][1] == 0.0


def test_a_scrape_gap_glitch_drops_points_of_every_series(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(glitches=GlitchRates(injection_failure=0, metric_gap=1.0))
    run = Run(cluster, incident("cartservice", "cpu_saturation"))
    series = list(cluster.metrics(run.during, QUERIES, 15.0))
    full = len(range(int(run.during.start // 15) + 1, int(run.during.end // 15) + 1))
    assert series and all(len(s.points) < full - 2 for s in series)
