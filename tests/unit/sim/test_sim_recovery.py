"""Recovery follows mechanics: the gold plan heals within 75 s, no_action and wrong targets don't.

The probe loop mirrors replay: after the plan, probe health every 5 s for up to 75 s;
recovered means three healthy probes in a row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import GlitchRates
from r2act.cluster.sim import SimulatedCluster
from r2act.errors import PermanentClusterError
from r2act.schema import (
    PLAN_ADAPTER,
    IncreaseMemoryLimit,
    NoAction,
    PlannedIncident,
    RecoveryPlan,
    RepairDependency,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    TimeWindow,
)
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES, chaos, gold_plan, incident

BUDGET_S, PROBE_S, CONSECUTIVE = 75.0, 5.0, 3

CASES = [
    ("cartservice", "pod_failure", "severe"),
    ("productcatalogservice", "cpu_saturation", "moderate"),
    ("checkoutservice", "cpu_saturation", "severe"),
    ("cartservice", "memory_pressure", "severe"),
    ("cartservice", "network_delay", "severe"),
    ("recommendationservice", "network_delay", "moderate"),
    ("cartservice", "http_error", "severe"),
    ("paymentservice", "http_abort", "moderate"),
    ("cartservice", "dns_fault", "severe"),
    ("productcatalogservice", "dns_random", "moderate"),
]


def recovers(cluster: SimulatedCluster, plan: RecoveryPlan) -> float | None:
    """Seconds from the plan to the first of CONSECUTIVE healthy probes, or None."""
    start = cluster.clock.now()
    cluster.apply_plan(plan)
    streak, first = 0, 0.0
    while cluster.clock.now() - start <= BUDGET_S:
        if cluster.health().healthy:
            first = first if streak else cluster.clock.now() - start
            streak += 1
            if streak >= CONSECUTIVE:
                return first
        else:
            streak = 0
        cluster.clock.sleep(PROBE_S)
    return None


def faulty(path: Path, inc: PlannedIncident) -> SimulatedCluster:
    """A cluster 30 s into ``inc``'s fault, which broke health at least once by then."""
    cluster = SimulatedCluster(path, glitches=NO_GLITCHES)
    cluster.clock.sleep(60)
    cluster.inject(chaos(inc))
    broken = False
    for _ in range(6):
        cluster.clock.sleep(PROBE_S)
        broken = broken or not cluster.health().healthy
    assert broken, "the fault must break health before the plan"
    return cluster


def wrong_target(plan: RecoveryPlan, service: str) -> RecoveryPlan:
    """The same operation aimed at a service off the fault's path (and off its route)."""
    scope = getattr(plan, "scope", None)
    for other in ("emailservice", "adservice", "shippingservice"):
        routes = {r.scope for r in ONLINE_BOUTIQUE.routes_of(other)}
        off_path = other != service and other not in ONLINE_BOUTIQUE.callers(service)
        if off_path and (scope is None or scope not in routes):
            break
    data = plan.model_dump()
    data["target"] = other
    return PLAN_ADAPTER.validate_python(data)


@pytest.mark.parametrize(("service", "fault", "intensity"), CASES)
def test_gold_plan_recovers_and_no_action_or_a_wrong_target_does_not(
    tmp_path: Path, service: str, fault: str, intensity: str
) -> None:
    inc = incident(service, fault, intensity)
    gold = gold_plan(inc)
    took = recovers(faulty(tmp_path / "gold", inc), gold)
    assert took is not None and took <= BUDGET_S, f"{gold} did not recover {inc.id}"
    assert recovers(faulty(tmp_path / "noop", inc), NoAction(operation="no_action")) is None
    wrong = wrong_target(gold, service)
    assert recovers(faulty(tmp_path / "wrong", inc), wrong) is None, wrong


def test_severe_cpu_stress_on_a_fan_out_service_needs_more_replicas(tmp_path: Path) -> None:
    inc = incident("currencyservice", "cpu_saturation", "severe")
    two = ScaleOut(operation="scale_out", target="currencyservice", replicas=2)
    five = ScaleOut(operation="scale_out", target="currencyservice", replicas=5)
    assert recovers(faulty(tmp_path / "two", inc), two) is None
    assert recovers(faulty(tmp_path / "five", inc), five) is not None


def test_rules_stay_unless_scope_or_dependency_match(tmp_path: Path) -> None:
    http = incident("cartservice", "http_error")
    cluster = faulty(tmp_path / "http", http)
    other_scope = RollbackConfig(
        operation="rollback_config", target="cartservice", scope="GET /cart"
    )
    assert cluster.apply_plan(other_scope).changes == []
    dns = incident("cartservice", "dns_fault")
    cluster = faulty(tmp_path / "dns", dns)
    wrong_port = RepairDependency(
        operation="repair_dependency", target="frontend", dependency="cartservice:7000"
    )
    assert cluster.apply_plan(wrong_port).changes == []
    via_caller = RepairDependency(
        operation="repair_dependency", target="frontend", dependency="cartservice:7070"
    )
    (change,) = cluster.apply_plan(via_caller).changes
    assert change.kind == "chaos_removed"
    assert cluster.leftovers() == []


def test_a_dns_rule_lives_on_the_callers_pods_so_only_restarting_all_callers_helps(
    tmp_path: Path,
) -> None:
    inc = incident("cartservice", "dns_fault")

    def restart(target: str) -> RecoveryPlan:
        return PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": target})

    assert recovers(faulty(tmp_path / "own", inc), restart("cartservice")) is None
    assert recovers(faulty(tmp_path / "one", inc), restart("frontend")) is None
    both = faulty(tmp_path / "both", inc)
    both.apply_plan(restart("frontend"))
    assert recovers(both, restart("checkoutservice")) is not None
    assert len(both.leftovers()) == 1


def test_a_memory_limit_below_the_request_is_rejected(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path)
    plan = IncreaseMemoryLimit(
        operation="increase_memory_limit", target="cartservice", memory_limit="32Mi"
    )
    with pytest.raises(PermanentClusterError, match="memory request"):
        cluster.apply_plan(plan)


def test_undo_restores_replicas_and_limits(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path)
    scaled = cluster.apply_plan(ScaleOut(operation="scale_out", target="cartservice", replicas=3))
    raised = cluster.apply_plan(
        IncreaseMemoryLimit(
            operation="increase_memory_limit", target="cartservice", memory_limit="512Mi"
        )
    )
    cluster.clock.sleep(60)
    cart = next(d for d in cluster.state().deployments if d.name == "cartservice")
    assert cart.replicas == 3 and cart.memory_limits == {"server": "512Mi"}
    cluster.undo(raised)
    cluster.undo(scaled)
    cluster.clock.sleep(60)
    cart = next(d for d in cluster.state().deployments if d.name == "cartservice")
    assert cart.replicas == 1 and cart.memory_limits == {"server": "128Mi"}
    assert cluster.health().healthy


def test_rollback_deployment_reverts_the_template(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path)
    assert (
        cluster.apply_plan(
            RollbackDeployment(operation="rollback_deployment", target="adservice")
        ).changes
        == []
    )
    cluster.apply_plan(
        IncreaseMemoryLimit(
            operation="increase_memory_limit", target="adservice", memory_limit="600Mi"
        )
    )
    effect = cluster.apply_plan(
        RollbackDeployment(operation="rollback_deployment", target="adservice")
    )
    (change,) = effect.changes
    assert change.kind == "template"
    cluster.clock.sleep(60)
    ads = next(d for d in cluster.state().deployments if d.name == "adservice")
    assert ads.memory_limits == {"server": "300Mi"} and ads.revision == 3
    pods = [p for p in cluster.state().pods if p.app == "adservice"]
    assert [p.containers[0].memory_limit for p in pods] == ["300Mi"]


def test_removal_heals_quickly_unless_recovery_is_slow(
    make_cluster: Callable[..., SimulatedCluster], tmp_path: Path
) -> None:
    inc = incident("cartservice", "pod_failure")
    for slow, path in ((0.0, tmp_path / "quick"), (1.0, tmp_path / "slow")):
        cluster = SimulatedCluster(
            path, glitches=GlitchRates(injection_failure=0, metric_gap=0, slow_recovery=slow)
        )
        ref = cluster.inject(chaos(inc))
        cluster.clock.sleep(60)
        cluster.remove(ref)
        cluster.clock.sleep(30)
        assert cluster.health().healthy is (slow == 0.0)
        cluster.clock.sleep(150)  # the default verify timeout (180 s) has run out
        assert cluster.health().healthy is (slow == 0.0)
        cluster.clock.sleep(120)  # ... and a default post window later it has healed
        assert cluster.health().healthy


@pytest.mark.parametrize(
    ("service", "fault", "target"),
    [
        ("cartservice", "memory_pressure", "cartservice"),
        ("productcatalogservice", "cpu_saturation", "productcatalogservice"),
        ("cartservice", "http_error", "frontend"),
    ],
)
def test_a_rollout_clears_faults_on_its_old_pods_whatever_the_label_says(
    tmp_path: Path, service: str, fault: str, target: str
) -> None:
    cluster = faulty(tmp_path, incident(service, fault))
    plan = PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": target})
    assert recovers(cluster, plan) is not None
    assert len(cluster.leftovers()) == 1


def test_scale_out_emits_the_controller_and_kubelet_events_of_new_pods(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path)
    start = cluster.clock.now()
    cluster.apply_plan(ScaleOut(operation="scale_out", target="cartservice", replicas=2))
    cluster.clock.sleep(60)
    events = cluster.events(TimeWindow(start, cluster.clock.now()))
    scaling = [e for e in events if e.reason == "ScalingReplicaSet"]
    assert [(e.object_kind, e.object_name) for e in scaling] == [("Deployment", "cartservice")]
    assert "from 1 to 2" in scaling[0].message
    new_pod = [e for e in events if e.object_kind == "Pod"]
    assert [e.reason for e in new_pod] == ["Scheduled", "Pulled", "Created", "Started"]
    assert all(e.object_name.startswith("cartservice-") for e in new_pod)
