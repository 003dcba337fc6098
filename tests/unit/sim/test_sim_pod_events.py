"""Every pod start shows the kubelet's and the scheduler's events, with the manifests' image."""

from __future__ import annotations

from pathlib import Path

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import PLAN_ADAPTER, NoiseLevel, TimeWindow
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES


def test_a_restart_in_a_healthy_window_shows_every_start_and_stop_event(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES, noise=NoiseLevel.NONE)
    start = cluster.clock.now()
    cluster.clock.sleep(60)
    plan = PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "cartservice"})
    cluster.apply_plan(plan)
    cluster.clock.sleep(120)
    events = cluster.events(TimeWindow(start, cluster.clock.now()))
    pods = {e.object_name for e in events if e.object_kind == "Pod" and e.reason == "Scheduled"}
    (new,) = pods
    reasons = [e.reason for e in events if e.object_name == new]
    assert reasons[:4] == ["Scheduled", "Pulled", "Created", "Started"]
    (pulled,) = [e.message for e in events if e.object_name == new and e.reason == "Pulled"]
    image = ONLINE_BOUTIQUE.deployment("cartservice").main.image
    assert pulled == f'Container image "{image}" already present on machine'
    assert "online-boutique-ci" in image
    killed = [e for e in events if e.reason == "Killing" and e.object_name != new]
    assert [e.message for e in killed] == ["Stopping container server"]
    assert cluster.state().pods  # the new pod serves


def test_every_new_pod_prints_its_start_up_lines(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES)
    start = cluster.clock.now()
    cluster.clock.sleep(30)
    plan = PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "frontend"})
    cluster.apply_plan(plan)
    cluster.clock.sleep(60)
    window = TimeWindow(start, cluster.clock.now())
    events = cluster.events(window)
    (new,) = {e.object_name for e in events if e.reason == "Scheduled"}
    lines = [x.line for b in cluster.logs(window) for x in b if x.pod == new]
    for text in ("Tracing disabled.", "Profiling disabled.", "starting server on"):
        assert any(text in line for line in lines), text


def test_a_rollouts_old_pod_keeps_the_deployment_available_until_the_new_one_is_ready(
    tmp_path: Path,
) -> None:
    """docs/simulator.md, "Pod starts": the recovery streak (three healthy rounds 5 s apart)
    counts the old pod as available, as ``availableReplicas`` does, so it can end before a
    rollout of the frontend (readiness after 10 s) finishes; the old pod's ``Killing`` and
    the scale-down then come later, in the post window."""
    cluster = SimulatedCluster(tmp_path, users=27, glitches=NO_GLITCHES, noise=NoiseLevel.NONE)
    cluster.clock.sleep(60)
    start = cluster.clock.now()
    plan = PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "frontend"})
    cluster.apply_plan(plan)
    streak = []
    for _ in range(3):
        streak.append(cluster.health())
        cluster.clock.sleep(5)
    assert all(r.healthy and not r.unavailable for r in streak)
    post = cluster.clock.now() - 5
    cluster.clock.sleep(60)
    events = cluster.events(TimeWindow(start, cluster.clock.now()))
    (new,) = {e.object_name for e in events if e.reason == "Scheduled"}
    (killing,) = [e for e in events if e.reason == "Killing" and e.object_name != new]
    scaled = [e for e in events if e.reason == "ScalingReplicaSet" and "Scaled down" in e.message]
    assert killing.ts > post and [e.ts for e in scaled] == [killing.ts]
    assert max(e.ts for e in events if e.object_name == new and e.reason == "Started") < post
