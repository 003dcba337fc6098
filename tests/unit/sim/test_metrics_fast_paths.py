"""The metric path's shortcuts give exactly what the plain forms give.

``SumBy`` sums a ``sum by`` with each labels dict's group key and each group's sorted
key kept across steps; ``Background`` keeps a load's collection cycle, collection CPU and
throttling rate per steady state; ``_Labelled`` finds a series' points once; ``poisson``
binds its generator's ``random`` once; ``_Instant`` holds per (pod, step) what was worked
out per sample; ``MetricSource._labels`` shares a label set among the metrics of its kind;
``write_metrics`` encodes label JSON with one encoder. Each is checked
against the plain form on awkward inputs (the series themselves against recorded digests
in ``test_metrics_every_metric``), so a shortcut that changed one sum, one order or one
bit fails here."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.identity import PAUSE_IMAGE
from r2act.cluster.sim.metric_noise import (
    HEAVY,
    REALISTIC,
    Background,
    ContainerLoad,
    MetricBackground,
    poisson,
)
from r2act.cluster.sim.metrics import MetricSource, _Labelled, _scraped
from r2act.cluster.sim.promql import LabelKey, Sample, SumBy
from r2act.collector import store
from r2act.schema import MetricSeries

from .conftest import NO_GLITCHES, Run, incident


def _plain_sum(samples: list[Sample], group: tuple[str, ...]) -> list[tuple[LabelKey, float]]:
    """``sum by (group)`` as written before: a key per sample, a dict per group per step."""
    totals: dict[tuple[tuple[str, str], ...], float] = {}
    for labels, value in samples:
        key = tuple((k, labels.get(k, "")) for k in group)
        totals[key] = totals.get(key, 0.0) + value
    return [(tuple(sorted(dict(key).items())), value) for key, value in totals.items()]


def _same(a: object, b: object) -> bool:
    """Equal to the bit (``repr`` tells -0.0 from 0.0 and matches nan with nan)."""
    return repr(a) == repr(b)


@pytest.mark.parametrize(
    "group", [("namespace", "pod"), ("pod",), (), ("pod", "namespace"), ("pod", "pod"), ("x",)]
)
def test_groups_sum_every_step_as_the_plain_sum_does(group: tuple[str, ...]) -> None:
    pods = [
        {"namespace": "ns", "pod": "a", "name": "1"},
        {"namespace": "ns", "pod": "a", "name": "2"},  # a second series of the same pod
        {"pod": "b", "namespace": "ns"},  # another key order
        {"namespace": "ns"},  # no pod label: its group value is ""
        {"namespace": "other", "pod": "a"},
    ]
    late = {"namespace": "ns", "pod": "c"}  # a labels dict first seen at a later step
    groups = SumBy(group)
    draws = random.Random(5)
    for step in range(6):
        labelled = pods + ([late] if step >= 3 else [])
        samples: list[Sample] = [
            (labels, draws.choice([0.1, 0.2, 1e16, -0.0, 3.0, 1e-300]))
            for labels in draws.sample(labelled, len(labelled))  # a new order per step
        ]
        got = groups.totals(samples)
        want = _plain_sum(samples, group)
        assert [k for k, _ in got] == [k for k, _ in want]
        assert all(_same(g, w) for (_, g), (_, w) in zip(got, want, strict=True))


def test_groups_of_an_empty_step_are_empty() -> None:
    assert SumBy(("pod",)).totals([]) == []


def test_labelled_entries_of_the_same_key_add_to_one_series_in_first_seen_order() -> None:
    """A pod's labels are rebuilt when its image changes (a pod-failure's pause image) and
    again when it changes back: the third dict has the first one's key, so its points must
    go on the first series, which keeps its place among the query's series."""
    before = {"pod": "a", "image": "app"}
    paused = {"pod": "a", "image": "pause"}
    after = {"image": "app", "pod": "a"}
    points: dict[LabelKey, list[tuple[float, float]]] = {}
    other = _Labelled({"pod": "b"}, ())
    first, second, third = (_Labelled(x, ()) for x in (before, paused, after))
    first.point(points, 0.0, 1.0)
    other.point(points, 0.0, 5.0)
    second.point(points, 15.0, 2.0)
    third.point(points, 30.0, 3.0)
    first.point(points, 45.0, 4.0)
    assert list(points) == [first.key, other.key, second.key]
    assert points[first.key] == [(0.0, 1.0), (30.0, 3.0), (45.0, 4.0)]
    assert points[second.key] == [(15.0, 2.0)]


def test_labelled_matches_once_as_the_matchers_say() -> None:
    labels = {"pod": "cart-1", "container": ""}
    assert _Labelled(labels, (("pod", "=~", "cart.*"),)).keep
    assert not _Labelled(labels, (("container", "!=", ""),)).keep
    assert _Labelled(labels, ()).key == (("container", ""), ("pod", "cart-1"))


_LOADS = [
    ContainerLoad("go", 12.5, 1.8, 0.2, 57 * 2**20, 100.0),
    ContainerLoad("go", 0.0, 1.8, 0.2, 57 * 2**20, 100.0),
    ContainerLoad("go", -0.0, 1.8, 0.2, 57 * 2**20, 100.0),
    ContainerLoad("go", 12.5, 1.8, 0.2, float(57 * 2**20), 7.0),  # float working set
    ContainerLoad("node", 300.0, 0.4, 0.1, 180 * 2**20, 5.0),
    ContainerLoad("java", 1e-9, 3.0, 0.3, 400 * 2**20, 1e6),
    ContainerLoad("csharp", 40.0, 2.0, 0.0, 100 * 2**20, 0.0),  # no CPU quota
    ContainerLoad("python", 40.0, 2.0, 4.0, 100 * 2**20, 0.0),
    ContainerLoad("redis", 40.0, 0.5, 0.1, 30 * 2**20, 10.0),  # no collector
    ContainerLoad("cobol", 40.0, 0.5, 0.1, 30 * 2**20, 10.0),  # unknown runtime
    ContainerLoad("go", math.inf, 1.8, 0.2, 57 * 2**20, 1.0),
    ContainerLoad("go", math.nan, 1.8, 0.2, 57 * 2**20, 1.0),
    ContainerLoad("go", 12.5, 1e-12, 1e-3, 2**40, 1.0),
]


@pytest.mark.parametrize("params", [REALISTIC, HEAVY, MetricBackground(runtime_scale=0.5)])
def test_kept_steady_values_are_the_worked_out_ones(params: MetricBackground) -> None:
    kept, fresh = Background(params, 3), Background(params, 3)
    for _ in range(3):  # the first pass fills the kept values, the others read them
        for load in _LOADS + list(reversed(_LOADS)):
            assert _same(kept.gc_cycle_s(load), fresh._gc_cycle_s(load))
            assert _same(kept.gc_ms(load), fresh._gc_ms(load))
            assert _same(kept.throttled_per_s(load), fresh._throttled_per_s(load))


def test_a_load_differing_in_any_kept_field_gets_its_own_values() -> None:
    """The values are kept by (language, calls, cost, limit, working set): a key missing
    one would hand a load another's values."""
    base = ContainerLoad("go", 12.5, 1.8, 0.2, 57 * 2**20, 100.0)
    variants = [
        ContainerLoad("node", 12.5, 1.8, 0.2, 57 * 2**20, 100.0),
        ContainerLoad("go", 90.0, 1.8, 0.2, 57 * 2**20, 100.0),
        ContainerLoad("go", 12.5, 40.0, 0.2, 57 * 2**20, 100.0),
        ContainerLoad("go", 12.5, 1.8, 0.05, 57 * 2**20, 100.0),
        ContainerLoad("go", 12.5, 1.8, 0.2, 300 * 2**20, 100.0),
    ]
    background, fresh = Background(REALISTIC, 3), Background(REALISTIC, 3)
    background.throttled_per_s(base)
    for load in variants:
        want = (fresh._gc_cycle_s(load), fresh._gc_ms(load), fresh._throttled_per_s(load))
        got = (
            background.gc_cycle_s(load),
            background.gc_ms(load),
            background.throttled_per_s(load),
        )
        assert _same(got, want)


def test_kept_steady_values_stay_right_past_their_bound() -> None:
    background, fresh = Background(REALISTIC, 3), Background(REALISTIC, 3)
    loads = [ContainerLoad("go", i / 7, 1.8, 0.2, 57 * 2**20, 1.0) for i in range(4200)]
    for load in loads + loads[:50]:  # the bound clears the kept values once on the way
        assert _same(background.throttled_per_s(load), fresh._throttled_per_s(load))
    assert len(background._steadies) <= 4097


def _plain_poisson(draw: random.Random, mean: float) -> int:
    """Knuth's count as ``poisson`` wrote it, asking ``draw.random`` each time."""
    if mean <= 0.0:
        return 0
    if mean > 30.0:
        return max(0, round(draw.gauss(mean, math.sqrt(mean))))
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= draw.random()
        if p <= limit:
            return k
        k += 1


@pytest.mark.parametrize("mean", [-1.0, 0.0, 1e-9, 0.5, 1.0, 7.3, 29.99, 30.0, 30.01, 900.0])
def test_poisson_draws_what_the_plain_count_draws(mean: float) -> None:
    for seed in range(40):
        mine, plain = random.Random(seed), random.Random(seed)
        assert poisson(mine, mean) == _plain_poisson(plain, mean)
        assert mine.random() == plain.random()  # and used up as many draws


def test_metric_label_json_is_what_json_dumps_sorted_gives(tmp_path: Path) -> None:
    labels = [
        {"pod": "b", "container": "server", "": "empty"},
        {"ünï": "cödé", "quote": 'say "hi"', "back": "sla\\sh", "ctl": "tab\tnl\n"},
        {},
        {"z": "1", "a": "2", "m": "3"},
        {"emoji": "\U0001f600", "nul": "\x00"},
    ]
    series = [MetricSeries("q", one, [(1.0, 2.0)]) for one in labels]
    path = tmp_path / "metrics.parquet"
    store.write_metrics(path, series)
    written = pq.read_table(path).column("labels").to_pylist()
    assert written == [json.dumps(one, sort_keys=True) for one in labels]


@pytest.mark.parametrize("fault", ["pod_failure", "memory_pressure", "cpu_saturation"])
def test_an_instant_holds_what_the_timeline_and_scene_say(tmp_path: Path, fault: str) -> None:
    """``_Instant`` works out once per (pod, step) what ``_samples`` and the value methods
    worked out per sample: the cache keys, the image cAdvisor names (a pod-failure's pause
    image), the ready share and calls, through restarts and pauses."""
    cluster = SimulatedCluster(tmp_path, seed=11, glitches=NO_GLITCHES)
    run = Run(cluster, incident("cartservice", fault))
    seen: set[tuple[str, bool, int]] = set()
    for step in range(int(run.pre.start), int(run.during.end), 5):
        scene = cluster.scene_at(float(step))
        for now in _scraped(scene):
            line, pod, t = now.line, now.line.pod, scene.t
            restarts = line.restart_count(t)
            assert now.pod_key == pod.name
            assert now.instance_key == (pod.name if restarts == 0 else f"{pod.name}#{restarts}")
            assert now.image == (PAUSE_IMAGE if line.paused(t) else line.facts.image)
            view = scene.services.get(pod.app)
            share = 1.0 / len(view.ready) if view and pod.name in view.ready else 0.0
            assert _same(now.share, share)
            assert _same(now.calls, scene.received.get(pod.app, 0.0) * share)
            assert now.t_text == repr(t) and now.pod_text == repr(pod.name)
            seen.add((pod.app, line.paused(t), restarts))
    assert any(paused for _, paused, _ in seen) == (fault == "pod_failure")


_LABELLED_METRICS = [
    "kube_pod_status_ready",
    "kube_pod_status_phase",
    "kube_pod_container_status_restarts_total",
    "kube_pod_container_status_ready",
    "kube_pod_container_resource_limits",
    "kube_pod_container_resource_requests",
    "container_network_receive_bytes_total",
    "container_network_transmit_packets_total",
    "container_cpu_usage_seconds_total",
    "container_memory_working_set_bytes",
]


def test_shared_label_sets_are_the_ones_each_query_built(tmp_path: Path) -> None:
    """A label set is shared by every metric of its kind, per pod, container instance and
    image (the pause image of a pod-failure and back): each must be the dict the plain
    ``_labels_of`` builds for that metric, also after the bound cleared the shared ones."""
    cluster = SimulatedCluster(tmp_path, seed=11, glitches=NO_GLITCHES)
    run = Run(cluster, incident("cartservice", "pod_failure"))
    source = cluster._metrics
    plain = MetricSource(source.topology, source.seed, source.namespace)
    for step in range(int(run.pre.end) - 30, int(run.during.end), 5):
        scene = cluster.scene_at(float(step))
        for now in _scraped(scene):
            for metric in _LABELLED_METRICS:
                for instance in (0, 1, now.restarts):
                    want = plain._labels_of(metric, now.line, scene.t, instance)
                    assert source._labels(metric, now.line, scene.t, instance) == want
    scene = cluster.scene_at(run.during.end)
    line, t = _scraped(scene)[0].line, scene.t
    for instance in range(4200):
        metric = _LABELLED_METRICS[instance % len(_LABELLED_METRICS)]
        assert source._labels(metric, line, t, instance) == plain._labels_of(
            metric, line, t, instance
        )
    assert len(source._label_sets) <= 4097
