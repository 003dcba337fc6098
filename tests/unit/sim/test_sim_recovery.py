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
from r2act.errors import ConflictError, PermanentClusterError
from r2act.schema import (
    PLAN_ADAPTER,
    IncreaseMemoryLimit,
    NoAction,
    NoiseLevel,
    PlannedIncident,
    RecoveryPlan,
    RepairDependency,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    TimeWindow,
)
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import (
    NO_GLITCHES,
    PRIMARY_CALLER,
    chaos,
    config_fault,
    dns_chaos,
    incident,
    memory_stress,
)

BUDGET_S, PROBE_S, CONSECUTIVE = 75.0, 5.0, 3

POD_LEVEL = [
    ("cartservice", "pod_failure", "severe"),
    ("productcatalogservice", "cpu_saturation", "moderate"),
    ("checkoutservice", "cpu_saturation", "severe"),
    ("cartservice", "network_delay", "severe"),
    ("recommendationservice", "network_delay", "moderate"),
    ("frontend", "http_error", "severe"),
    ("frontend", "http_abort", "moderate"),
]
CONFIG = [
    ("cartservice", "dns_fault", "severe"),
    ("productcatalogservice", "dns_random", "moderate"),
    ("paymentservice", "dns_fault", "moderate"),
    ("redis-cart", "dns_random", "severe"),
    ("cartservice", "memory_pressure", "moderate"),
    ("adservice", "memory_pressure", "moderate"),
]


def restart(target: str) -> RecoveryPlan:
    """restart_service of ``target``."""
    return PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": target})


def contract_gold(service: str, fault: str, intensity: str) -> RecoveryPlan:
    """The gold plan of CONTRACTS.md's realizability table (policy r2act-mechanics/3)."""
    spec = ONLINE_BOUTIQUE.deployment(service)
    plan: dict[str, object]
    if fault in ("pod_failure", "network_delay", "cpu_saturation"):
        plan = {"operation": "restart_service", "target": service}
    elif fault in ("http_error", "http_abort"):
        params = incident(service, fault, intensity).fault.parameters
        scope = f"{params['method']} {params['path']}"
        plan = {"operation": "rollback_config", "target": "frontend", "scope": scope}
    elif fault in ("dns_fault", "dns_random"):
        plan = {
            "operation": "repair_dependency",
            "target": PRIMARY_CALLER[service],
            "dependency": spec.endpoint,
        }
    else:
        plan = {
            "operation": "increase_memory_limit",
            "target": service,
            "memory_limit": spec.main.memory_limit,
        }
    return PLAN_ADAPTER.validate_python(plan)


def contract_invalid(service: str, fault: str) -> list[RecoveryPlan]:
    """The table's "not valid" plans (mechanics), plus no_action."""
    plans: list[RecoveryPlan] = [NoAction(operation="no_action")]
    replicas = ONLINE_BOUTIQUE.deployment(service).replicas + 1
    scale = ScaleOut(operation="scale_out", target=service, replicas=replicas)
    if fault in ("pod_failure", "network_delay", "cpu_saturation"):
        plans.append(scale)
    elif fault in ("http_error", "http_abort"):
        params = incident(service, fault).fault.parameters
        route = next(
            r
            for r in ONLINE_BOUTIQUE.routes
            if r.method == params["method"] and r.path == params["path"]
        )
        backend = route.services[0]  # a backend the route's requests reach
        plans += [
            restart(backend),
            ScaleOut(operation="scale_out", target=backend, replicas=2),
        ]
    elif fault in ("dns_fault", "dns_random"):
        plans += [restart(service), restart(PRIMARY_CALLER[service])]
    else:
        plans.append(restart(service))
    return plans


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


def injected(inc: PlannedIncident | tuple[str, str, str]) -> dict[str, object]:
    """What a campaign sends for the incident: a Chaos Mesh object or a ConfigFault."""
    if isinstance(inc, tuple):
        return config_fault(*inc)
    return chaos(inc)


def faulty(path: Path, inc: PlannedIncident | tuple[str, str, str]) -> SimulatedCluster:
    """A cluster 30 s into ``inc``'s fault, which broke health at least once by then."""
    cluster = SimulatedCluster(path, glitches=NO_GLITCHES)
    cluster.clock.sleep(60)
    cluster.inject(injected(inc))
    broken = False
    for _ in range(6):
        cluster.clock.sleep(PROBE_S)
        broken = broken or not cluster.health().healthy
    assert broken, "the fault must break health before the plan"
    return cluster


@pytest.mark.parametrize(("service", "fault", "intensity"), POD_LEVEL + CONFIG)
def test_the_contract_gold_plan_recovers_and_its_invalid_plans_do_not(
    tmp_path: Path, service: str, fault: str, intensity: str
) -> None:
    case: PlannedIncident | tuple[str, str, str] = (service, fault, intensity)
    if (service, fault, intensity) in POD_LEVEL:
        case = incident(service, fault, intensity)
    gold = contract_gold(service, fault, intensity)
    took = recovers(faulty(tmp_path / "gold", case), gold)
    assert took is not None and took <= BUDGET_S, f"{gold} did not recover {service} {fault}"
    for index, plan in enumerate(contract_invalid(service, fault)):
        assert recovers(faulty(tmp_path / f"bad{index}", case), plan) is None, plan


@pytest.mark.parametrize(
    ("service", "fault"), [("cartservice", "dns_fault"), ("productcatalogservice", "dns_random")]
)
def test_rolling_the_caller_back_also_repairs_a_broken_address(
    tmp_path: Path, service: str, fault: str
) -> None:
    plan = RollbackDeployment(operation="rollback_deployment", target=PRIMARY_CALLER[service])
    assert recovers(faulty(tmp_path, (service, fault, "severe")), plan) is not None


def test_rolling_back_a_too_low_memory_limit_recovers(tmp_path: Path) -> None:
    plan = RollbackDeployment(operation="rollback_deployment", target="cartservice")
    case = ("cartservice", "memory_pressure", "moderate")
    assert recovers(faulty(tmp_path, case), plan) is not None


def test_scale_out_leaves_a_cpu_stressed_pod_with_its_pinned_clients(tmp_path: Path) -> None:
    inc = incident("currencyservice", "cpu_saturation", "severe")
    five = ScaleOut(operation="scale_out", target="currencyservice", replicas=5)
    cluster = faulty(tmp_path / "five", inc)
    assert recovers(cluster, five) is None
    view = cluster.scene_at(cluster.clock.now()).services["currencyservice"]
    stressed = [p for p, rho in view.rho.items() if rho > 0]
    assert len(view.ready) == 5 and len(stressed) == 1
    assert view.share[stressed[0]] == pytest.approx(1.0)


def test_memory_stress_beyond_the_limit_kills_the_group_once_then_the_pod_is_clean(
    tmp_path: Path,
) -> None:
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    cluster.clock.sleep(60)
    ref = cluster.inject(memory_stress("cartservice"))
    cluster.clock.sleep(60)
    (pod,) = [p for p in cluster.state().pods if p.app == "cartservice"]
    assert pod.containers[0].restart_count == 1
    assert pod.containers[0].last_terminated_reason == "OOMKilled"
    assert cluster.health().healthy  # no_action recovers: nothing re-applies the stressor
    assert cluster.chaos_status(ref).injected()  # the record stays Injected
    events = cluster.events(TimeWindow(cluster.clock.now() - 120, cluster.clock.now()))
    assert not [e for e in events if e.reason == "OOMKilling"]


def test_a_limit_below_the_start_up_working_set_leaves_the_rollout_stuck(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    cluster.inject(config_fault("cartservice", "memory_pressure", "severe"))
    cluster.clock.sleep(120)
    pods = [p for p in cluster.state().pods if p.app == "cartservice"]
    assert len(pods) == 2  # the old pod keeps serving (maxUnavailable rounds down to 0)
    crashing = [p for p in pods if not p.ready]
    assert len(crashing) == 1 and crashing[0].containers[0].last_terminated_reason == "OOMKilled"
    assert cluster.health().healthy


def test_dns_chaos_cannot_be_injected_into_stock_online_boutique(tmp_path: Path) -> None:
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    cluster.clock.sleep(60)
    ref = cluster.inject(dns_chaos(["frontend", "checkoutservice"], "cartservice"))
    cluster.clock.sleep(30)
    status = cluster.chaos_status(ref)
    assert status.failed() and not status.injected()
    assert all(r.phase == "Not Injected" for r in status.records)
    assert cluster.health().healthy
    events = cluster.events(TimeWindow(cluster.clock.now() - 60, cluster.clock.now()))
    failed = [e for e in events if e.reason == "Failed" and e.object_kind == "DNSChaos"]
    assert failed and all("Failed to apply chaos: rpc error" in e.message for e in failed)


def test_a_config_fault_is_bookkept_on_the_deployment_and_conflicts_and_removes(
    tmp_path: Path,
) -> None:
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES)
    ref = cluster.inject(config_fault("cartservice", "dns_fault"))
    assert ref.kind == "ConfigFault" and cluster.chaos_status(ref).injected(cluster.pod_names())
    assert [r.name for r in cluster.leftovers()] == [ref.name]
    frontend = next(d for d in cluster.state().deployments if d.name == "frontend")
    assert frontend.revision == 2
    with pytest.raises(ConflictError):
        cluster.inject(config_fault("cartservice", "dns_random", name="r2act-cf-other00000"))
    cluster.remove(ref)
    assert not cluster.chaos_status(ref).exists and cluster.leftovers() == []
    cluster.clock.sleep(60)
    assert cluster.health().healthy
    cluster.remove(ref)  # already gone: a no-op


def test_a_dns_config_fault_fails_only_at_its_caller(tmp_path: Path) -> None:
    cluster = faulty(tmp_path, ("paymentservice", "dns_fault", "severe"))
    scene = cluster.scene_at(cluster.clock.now())
    kind = "dns_error@paymentservice.invalid:50051"
    assert list(scene.call_errors["checkoutservice"]) == [("paymentservice", kind)]
    assert not any(
        callee == "paymentservice"
        for errors in scene.call_errors.values()
        for callee, _ in errors
        if errors is not scene.call_errors["checkoutservice"]
    )
    assert scene.addresses == {
        ("checkoutservice", "paymentservice"): "paymentservice.invalid:50051"
    }
    assert scene.services["paymentservice"].ready


def test_tolerated_backend_failures_do_not_break_pages(tmp_path: Path) -> None:
    for service in ("recommendationservice", "adservice", "emailservice"):
        cluster = SimulatedCluster(tmp_path / service, glitches=NO_GLITCHES)
        cluster.clock.sleep(60)
        cluster.inject(chaos(incident(service, "pod_failure")))
        cluster.clock.sleep(30)
        scene = cluster.scene_at(cluster.clock.now())
        assert all(v.fail < 0.01 for v in scene.routes.values()), service
        assert (
            sum(scene.call_errors["frontend"].values())
            + sum(scene.call_errors["checkoutservice"].values())
            > 0
        ), service


def test_no_deadline_exceeded_except_on_ads(tmp_path: Path) -> None:
    for service in ("cartservice", "adservice"):
        cluster = SimulatedCluster(tmp_path / service, glitches=NO_GLITCHES, noise=NoiseLevel.NONE)
        cluster.clock.sleep(60)
        cluster.inject(chaos(incident(service, "network_delay", "moderate")))
        cluster.clock.sleep(30)
        scene = cluster.scene_at(cluster.clock.now())
        kinds = {(c, k) for errs in scene.call_errors.values() for (c, k) in errs}
        deadline = {c for c, k in kinds if k == "deadline"}
        assert deadline == ({"adservice"} if service == "adservice" else set())
        assert not cluster.health().healthy or service == "adservice"


def test_rules_and_addresses_stay_unless_scope_or_dependency_match(tmp_path: Path) -> None:
    http = incident("frontend", "http_error")
    cluster = faulty(tmp_path / "http", http)
    other_scope = RollbackConfig(operation="rollback_config", target="frontend", scope="GET /cart")
    assert cluster.apply_plan(other_scope).changes == []
    cluster = faulty(tmp_path / "dns", ("cartservice", "dns_fault", "severe"))
    wrong_port = RepairDependency(
        operation="repair_dependency", target="frontend", dependency="cartservice:7000"
    )
    assert cluster.apply_plan(wrong_port).changes == []
    wrong_caller = RepairDependency(
        operation="repair_dependency", target="checkoutservice", dependency="cartservice:7070"
    )
    assert cluster.apply_plan(wrong_caller).changes == []
    via_caller = RepairDependency(
        operation="repair_dependency", target="frontend", dependency="cartservice:7070"
    )
    (change,) = cluster.apply_plan(via_caller).changes
    assert change.kind == "template" and change.deployment == "frontend"
    assert len(cluster.leftovers()) == 1  # the fault's bookkeeping stays until removal


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
        ("productcatalogservice", "cpu_saturation", "productcatalogservice"),
        ("cartservice", "network_delay", "cartservice"),
        ("frontend", "http_error", "frontend"),
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
