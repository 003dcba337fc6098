"""Chaos objects are read and reported the way the Chaos Mesh controller does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from r2act.campaigns import GlitchRates
from r2act.cluster.sim import SimulatedCluster
from r2act.errors import ConflictError, PermanentClusterError, TransientClusterError
from r2act.schema import ScaleOut, TimeWindow

from .conftest import chaos, incident

MakeCluster = Callable[..., SimulatedCluster]


def test_injection_selects_existing_pods_and_reports_injected(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    ref = cluster.inject(chaos(incident("cartservice", "cpu_saturation")))
    cluster.clock.sleep(5)
    status = cluster.chaos_status(ref)
    assert status.injected(cluster.pod_names())
    assert status.conditions == {
        "Selected": True,
        "AllInjected": True,
        "AllRecovered": False,
        "Paused": False,
    }
    assert status.desired_phase == "Run"
    (record,) = status.records
    assert record.id.startswith("default/cartservice-") and record.id.endswith("/server")
    assert record.phase == "Injected" and record.injected_count == 1
    assert [(e.type, e.operation) for e in record.events] == [("Succeeded", "Apply")]


def test_pods_created_after_injection_are_not_injected(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    ref = cluster.inject(chaos(incident("cartservice", "cpu_saturation")))
    before = {r.pod for r in cluster.chaos_status(ref).records}
    cluster.apply_plan(ScaleOut(operation="scale_out", target="cartservice", replicas=3))
    cluster.clock.sleep(60)
    after = {r.pod for r in cluster.chaos_status(ref).records}
    pods = {p.name for p in cluster.state().pods if p.app == "cartservice"}
    assert after == before and len(pods) == 3
    scene = cluster.scene_at(cluster.clock.now())
    assert set(scene.services["cartservice"].rho) == before


def test_pod_level_records_are_per_pod_and_a_config_fault_counts_the_callers_new_pods(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster()
    pod_ref = cluster.inject(chaos(incident("paymentservice", "pod_failure")))
    dns_ref = cluster.inject(chaos(incident("cartservice", "dns_random")))
    cluster.clock.sleep(5)
    assert cluster.chaos_status(pod_ref).records[0].id.count("/") == 1
    assert dns_ref.kind == "ConfigFault"
    records = cluster.chaos_status(dns_ref).records
    assert {r.pod.rsplit("-", 2)[0] for r in records} == {"frontend"}  # the primary caller
    old = {p.name for p in cluster.state().pods if p.app == "frontend"} - {r.pod for r in records}
    assert len(old) == 1  # the rollout's old pod serves until the new one is ready


def test_removal_recovers_and_the_object_disappears(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    ref = cluster.inject(chaos(incident("cartservice", "pod_failure")))
    cluster.clock.sleep(30)
    start = cluster.clock.now()
    cluster.remove(ref)
    status = cluster.chaos_status(ref)
    assert not status.exists and status.recovered()
    cluster.remove(ref)  # already gone: a no-op
    reasons = [e.reason for e in cluster.events(TimeWindow(start, cluster.clock.now()))]
    assert "Recovered" in reasons and "Deleted" in reasons


def test_duration_expiry_stops_the_experiment_but_keeps_the_object(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster()
    ref = cluster.inject(chaos(incident("cartservice", "network_delay")))
    cluster.clock.sleep(10_000)
    status = cluster.chaos_status(ref)
    assert status.exists and status.desired_phase == "Stop"
    assert status.conditions["AllRecovered"] and status.recovered()
    for record in status.records:
        assert record.phase == "Not Injected" and record.recovered_count == 1
        assert [e.operation for e in record.events] == ["Apply", "Recover"]
    assert cluster.health().healthy


def test_creating_the_same_object_twice_conflicts(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    obj = chaos(incident("cartservice", "dns_fault"))
    cluster.inject(obj)
    with pytest.raises(ConflictError):
        cluster.inject(obj)


def test_a_malformed_object_is_rejected_permanently(make_cluster: MakeCluster) -> None:
    cluster = make_cluster()
    obj = chaos(incident("cartservice", "dns_fault"))
    obj["kind"] = "IOChaos"
    with pytest.raises(PermanentClusterError, match="kind"):
        cluster.inject(obj)


def test_injection_failure_glitch_leaves_records_not_injected_with_failed_events(
    make_cluster: MakeCluster,
) -> None:
    cluster = make_cluster(glitches=GlitchRates(injection_failure=1.0))
    start = cluster.clock.now()
    ref = cluster.inject(chaos(incident("cartservice", "pod_failure")))
    cluster.clock.sleep(30)
    status = cluster.chaos_status(ref)
    assert status.failed() and not status.injected()
    assert all(r.phase == "Not Injected" for r in status.records)
    events = cluster.events(TimeWindow(start, cluster.clock.now()))
    failed = [e for e in events if e.reason == "Failed" and e.object_kind == "PodChaos"]
    assert failed and failed[0].type == "Warning"
    assert cluster.health().healthy


def test_transient_api_errors_follow_the_configured_share(make_cluster: MakeCluster) -> None:
    cluster = make_cluster(glitches=GlitchRates(transient_api_error=0.5))
    failures = 0
    for _ in range(200):
        try:
            cluster.pod_names()
        except TransientClusterError:
            failures += 1
    assert 60 < failures < 140


def test_listed_incidents_fail_permanently(make_cluster: MakeCluster) -> None:
    inc = incident("cartservice", "pod_failure")
    cluster = make_cluster(glitches=GlitchRates(fail_incidents=[inc.id]))
    with pytest.raises(PermanentClusterError):
        cluster.inject(chaos(inc))
    assert cluster.leftovers() == []
    cluster.inject(chaos(incident("cartservice", "dns_fault")))
