"""Scenes kept across changes of the history are the scenes a fresh build gives.

``SimulatedCluster.scene_at`` reuses a stretch's scene built for an earlier history when
what a scene reads before the stretch's end (``PodTimeline.read_before``) is the same, or
(for the stretch a change cut short) what the older, longer stretch read before the new
end (``fold_history``). The tests hold it to ``build_scene`` itself: every scene served
after injections, plans, removals and a rewind equals a fresh build; times at or after an
instant fold away without changing any scene before it, a time before it changes what is
read, and folding again is reading before the earlier end.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim import cluster as cluster_module
from r2act.cluster.sim.scene import Scene, build_scene
from r2act.cluster.sim.timeline import ActiveFault, PodTimeline, fold_history, history_before
from r2act.schema import NoiseLevel
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import chaos, config_fault, gold_plan, incident

BUDGETS = (-5.0, 0.0, 40.0, 100.0, 900.0)


def assert_same(got: Scene, want: Scene) -> None:
    """Every field equal; the pause closure compared on its answers."""
    a, b = dict(vars(got)), dict(vars(want))
    late_a, late_b = a.pop("pause_late"), b.pop("pause_late")
    assert a == b
    for name in (*ONLINE_BOUTIQUE.names, "nothing"):
        for budget in BUDGETS:
            assert late_a(name, budget) == late_b(name, budget)


def check_every_stretch(cluster: SimulatedCluster) -> int:
    """Each stretch of the last hour, asked twice, against a fresh build; how many."""
    timelines = cluster.timelines()
    now = cluster.clock.now()
    bounds = [now - 3600.0, *(c for c in cluster._cuts if now - 3600.0 < c < now), now]
    for lo, hi in pairwise(bounds):
        for t in (lo + (hi - lo) / 3, lo + (hi - lo) / 2):
            fresh = build_scene(cluster.topology, timelines, t, cluster.users, cluster.noise)
            assert_same(cluster.scene_at(t), fresh)
    return len(bounds) - 1


def counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the cluster's scene builds."""
    built = [0]
    plain = cluster_module.build_scene

    def build(*args: object, **kwargs: object) -> Scene:
        built[0] += 1
        return plain(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(cluster_module, "build_scene", build)
    return built


CASES = [
    ("cartservice", "pod_failure", "severe"),
    ("productcatalogservice", "cpu_saturation", "severe"),
    ("cartservice", "network_delay", "severe"),
    ("frontend", "http_error", "severe"),
]


@pytest.mark.parametrize(("service", "fault", "intensity"), CASES)
def test_scenes_after_changes_equal_fresh_builds(
    make_cluster: Callable[..., SimulatedCluster],
    monkeypatch: pytest.MonkeyPatch,
    service: str,
    fault: str,
    intensity: str,
) -> None:
    built = counting(monkeypatch)
    cluster = make_cluster(noise=NoiseLevel.REALISTIC)
    inc = incident(service, fault, intensity)
    assert not cluster.rewind_to("incident", "one")
    asked = 0

    def step(seconds: float) -> None:
        nonlocal asked
        cluster.clock.sleep(seconds)
        asked += check_every_stretch(cluster)

    step(300.0)
    ref = cluster.inject(chaos(inc))
    step(90.0)
    cluster.apply_plan(gold_plan(inc))
    step(60.0)
    cluster.remove(ref)
    step(30.0)
    assert cluster.rewind_to("incident", "one")  # the past changes wholesale
    step(200.0)
    assert built[0] < asked  # some stretches kept their scene across a change


def test_config_fault_scenes_equal_fresh_builds(
    make_cluster: Callable[..., SimulatedCluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    built = counting(monkeypatch)
    cluster = make_cluster()
    cluster.clock.sleep(120.0)
    check_every_stretch(cluster)
    before = built[0]
    ref = cluster.inject(config_fault("cartservice", "memory_pressure", "moderate"))
    cluster.clock.sleep(100.0)
    check_every_stretch(cluster)
    cluster.remove(ref)
    cluster.clock.sleep(50.0)
    check_every_stretch(cluster)
    assert built[0] > before  # the fault's stretches are new


def _moved(x: float, h: float, dt: float) -> float:
    return x + dt if h <= x < math.inf else x


def shifted(line: PodTimeline, h: float, dt: float) -> PodTimeline:
    """``line`` with every finite time at or after ``h`` moved ``dt`` later."""
    pod = line.pod
    gone = None if pod.deleted_at is None else _moved(pod.deleted_at, h, dt)
    return replace(
        line,
        pod=pod.model_copy(
            update={
                "created_at": _moved(pod.created_at, h, dt),
                "ready_at": _moved(pod.ready_at, h, dt),
                "deleted_at": gone,
            }
        ),
        faults=[
            ActiveFault(
                a.fault, a.rec, _moved(a.start, h, dt), _moved(a.stop, h, dt), _moved(a.end, h, dt)
            )
            for a in line.faults
        ],
        down=[(_moved(s, h, dt), _moved(e, h, dt)) for s, e in line.down],
        restarts=[(_moved(ts, h, dt), r) for ts, r in line.restarts],
    )


def faulted(make_cluster: Callable[..., SimulatedCluster]) -> SimulatedCluster:
    """A cluster whose last hour holds a pod-failure, a removal and new pods."""
    cluster = make_cluster()
    inc = incident("cartservice", "pod_failure", "severe")
    cluster.clock.sleep(60.0)
    ref = cluster.inject(chaos(inc))
    cluster.clock.sleep(150.0)
    cluster.apply_plan(gold_plan(inc))
    cluster.clock.sleep(40.0)
    cluster.remove(ref)
    cluster.clock.sleep(40.0)
    return cluster


def test_times_at_or_after_an_instant_change_no_scene_before_it(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = faulted(make_cluster)
    timelines = cluster.timelines()
    cuts = [c for c in cluster._cuts if c > cluster.clock.now() - 400.0]
    assert len(cuts) > 6
    for h in cuts[1:]:
        moved = {name: shifted(line, h, 7.5) for name, line in timelines.items()}
        for name, line in timelines.items():
            assert moved[name].read_before(h) == line.read_before(h)
        below = [c for c in cuts if c < h][-3:]
        for lo, hi in zip(below, [*below[1:], h], strict=True):
            t = (lo + hi) / 2
            want = build_scene(cluster.topology, timelines, t, cluster.users)
            got = build_scene(cluster.topology, moved, t, cluster.users)
            assert_same(replace(got, timelines=timelines), want)


def test_a_time_before_the_instant_changes_what_is_read(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = faulted(make_cluster)
    timelines = cluster.timelines()
    end = math.inf
    lines = [line for line in timelines.values() if line.faults or line.restarts]
    assert lines
    for line in lines:
        base = line.read_before(end)
        variants = [
            replace(line, pod=line.pod.model_copy(update={"ready_at": line.pod.ready_at + 1})),
            replace(line, pod=line.pod.model_copy(update={"created_at": line.pod.created_at - 1})),
            replace(line, pod=line.pod.model_copy(update={"deleted_at": cluster.clock.now()})),
            replace(line, restarts=line.restarts[1:]),
            replace(line, down=[(s, e + 1.0) for s, e in line.down]),
            replace(line, faults=[replace(a, end=a.end - 1.0) for a in line.faults]),
            replace(line, faults=[replace(a, start=a.start + 1.0) for a in line.faults]),
            replace(line, pod=line.pod.model_copy(update={"env": {"X": "y"}})),
        ]
        changed = [
            v
            for v in variants
            if (v.restarts, v.down, v.faults, v.pod)
            != (line.restarts, line.down, line.faults, line.pod)
        ]
        assert changed
        for variant in changed:
            assert variant.read_before(end) != base


def test_a_pod_with_nothing_before_the_instant_plays_no_part(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = faulted(make_cluster)
    newest = max(cluster.timelines().values(), key=lambda line: line.pod.created_at)
    born = newest.pod.created_at
    assert newest.read_before(born) is None
    assert newest.read_before(born + 1e-6) is not None
    assert newest.read_before(math.inf) is not None


def test_scene_at_copies_are_what_replace_gives(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = make_cluster()
    scene = cluster.scene_at(cluster.clock.now())
    for t in (scene.t, scene.t + 1.5):
        moved = scene.at(t)
        assert moved is not scene and vars(moved) == vars(replace(scene, t=t))
        assert list(vars(moved)) == list(vars(scene))
    other: dict[str, PodTimeline] = {}
    assert vars(scene.at(2.0, other)) == vars(replace(scene, t=2.0, timelines=other))


def test_the_stretch_a_change_cuts_short_keeps_its_scene(
    make_cluster: Callable[..., SimulatedCluster], monkeypatch: pytest.MonkeyPatch
) -> None:
    built = counting(monkeypatch)
    cluster = make_cluster()
    cluster.clock.sleep(200.0)
    before = cluster.clock.now()
    first = cluster.scene_at(before)
    assert cluster._cuts[-1] < before  # the open stretch up to now
    count = built[0]
    cluster.inject(chaos(incident("cartservice", "pod_failure", "severe")))
    assert cluster._cuts[-1] > before  # the change point cut it short
    again = cluster.scene_at(before)
    assert built[0] == count  # not rebuilt
    assert again.services is first.services
    fresh = build_scene(cluster.topology, cluster.timelines(), before, cluster.users, cluster.noise)
    assert_same(again, fresh)
    check_every_stretch(cluster)


def test_folding_the_history_again_is_reading_it_before_the_earlier_end(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = faulted(make_cluster)
    timelines = cluster.timelines()
    cuts = cluster._cuts
    assert len(cuts) > 6
    ends = [*cuts, math.inf]
    for i, end in enumerate(ends):
        reads = history_before(timelines, end)
        assert reads == tuple(
            p for line in timelines.values() if (p := line.read_before(end)) is not None
        )
        for h in [*ends[: i + 1], *(c - 0.5 for c in cuts[:i])]:
            assert fold_history(reads, h) == history_before(timelines, h)


def test_a_longer_stretch_that_read_another_history_is_not_taken(
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    cluster = make_cluster()
    cluster.clock.sleep(200.0)
    t = cluster.clock.now()
    cluster.inject(chaos(incident("cartservice", "pod_failure", "severe")))
    timelines, cuts = cluster.timelines(), cluster._cuts
    k = bisect_right(cuts, t)
    start, end = cuts[k - 1], cuts[k]
    reads = history_before(timelines, end)
    planted = replace(cluster.scene_at(t), services={})
    where = (start, cluster.users, cluster.noise)
    for other, taken in ((reads[1:], False), (reads, True)):
        cluster._scenes.clear()
        cluster._read_scenes.clear()
        cluster._longer = {where: [(end + 50.0, other, planted)]}
        assert (cluster.scene_at(t).services is planted.services) is taken
