"""Gold plans, P+ and P- per fault type follow the default policy and are plausible."""

from __future__ import annotations

from collections import Counter

import pytest
from action_incidents import ROOT_CAUSE_SERVICES, every_incident_kind, make_incident
from pydantic import ValidationError

from r2act.actions import DEFAULT_POLICY, IncidentLabels, is_valid, label_incident
from r2act.errors import DataError
from r2act.schema import (
    FailureMode,
    FaultType,
    IncreaseMemoryLimit,
    Intensity,
    NoAction,
    PlannedIncident,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
    memory_bytes,
)
from r2act.systems import ONLINE_BOUTIQUE

ALL = every_incident_kind()


def _labels(incident: PlannedIncident) -> IncidentLabels:
    return label_incident(incident, ONLINE_BOUTIQUE)


def _restart(target: str) -> RestartService:
    return RestartService(operation="restart_service", target=target)


@pytest.mark.parametrize("incident", ALL, ids=lambda i: i.id)
def test_gold_is_valid_and_every_negative_is_invalid(incident: PlannedIncident) -> None:
    labels = _labels(incident)
    assert is_valid(labels.gold_plan, labels)
    assert labels.policy == "r2act-default/1"
    assert len(labels.invalid_plans) >= 2
    for negative in labels.invalid_plans:
        assert not is_valid(negative.plan, labels), negative
        assert not any(p.matches(negative.plan) for p in labels.valid_plans), negative
        assert negative.rationale
    modes = {n.failure_mode for n in labels.invalid_plans}
    assert {FailureMode.NO_OP, FailureMode.WRONG_OPERATION} <= modes


def test_negatives_cover_every_failure_mode_across_fault_types() -> None:
    modes = Counter(n.failure_mode for i in ALL for n in _labels(i).invalid_plans)
    assert set(modes) == set(FailureMode)


def test_labels_are_deterministic_and_frozen() -> None:
    incident = make_incident("cartservice", FaultType.MEMORY_PRESSURE, Intensity.SEVERE, 2)
    labels = _labels(incident)
    assert labels == _labels(incident)
    with pytest.raises(ValidationError):
        labels.policy = "other/1"  # type: ignore[misc]


@pytest.mark.parametrize("fault_type", [FaultType.POD_FAILURE, FaultType.NETWORK_DELAY])
def test_pod_and_network_faults_are_recovered_by_restarting_the_service(
    fault_type: FaultType,
) -> None:
    labels = _labels(make_incident("checkoutservice", fault_type))
    assert labels.gold_plan == _restart("checkoutservice")
    assert not is_valid(_restart("frontend"), labels)  # the caller sees only symptoms


def test_cpu_saturation_accepts_any_replica_count_from_current_plus_one_to_ten() -> None:
    labels = _labels(make_incident("paymentservice", FaultType.CPU_SATURATION, Intensity.SEVERE))
    assert labels.gold_plan == ScaleOut(operation="scale_out", target="paymentservice", replicas=2)
    for replicas in range(1, 13):
        plan = ScaleOut(operation="scale_out", target="paymentservice", replicas=replicas)
        assert is_valid(plan, labels) is (2 <= replicas <= 10), replicas
    assert not is_valid(_restart("paymentservice"), labels)


def test_moderate_memory_stress_fits_the_headroom_so_restart_is_the_recovery() -> None:
    labels = _labels(make_incident("frontend", FaultType.MEMORY_PRESSURE, Intensity.MODERATE))
    assert labels.gold_plan == _restart("frontend")
    doubled = IncreaseMemoryLimit(
        operation="increase_memory_limit", target="frontend", memory_limit="256Mi"
    )
    assert not is_valid(doubled, labels)


def test_overflowing_memory_stress_needs_a_limit_above_request_plus_stress() -> None:
    incident = make_incident("frontend", FaultType.MEMORY_PRESSURE, Intensity.SEVERE, 2)  # 256MB
    labels = _labels(incident)
    gold = labels.gold_plan
    assert isinstance(gold, IncreaseMemoryLimit)
    needed = 64 * 2**20 + 256 * 10**6 + 16 * 2**20
    assert memory_bytes(gold.memory_limit) >= needed
    assert memory_bytes(gold.memory_limit) % (32 * 2**20) == 0

    def limit(quantity: str) -> IncreaseMemoryLimit:
        return IncreaseMemoryLimit(
            operation="increase_memory_limit", target="frontend", memory_limit=quantity
        )

    assert is_valid(limit("512Mi"), labels)  # the 4x ceiling is inclusive
    assert not is_valid(limit("513Mi"), labels)
    assert not is_valid(limit("256Mi"), labels)  # doubling is not enough here
    assert not is_valid(_restart("frontend"), labels)


@pytest.mark.parametrize("fault_type", [FaultType.HTTP_ERROR, FaultType.HTTP_ABORT])
def test_http_faults_roll_back_exactly_the_injected_route(fault_type: FaultType) -> None:
    incident = make_incident("cartservice", fault_type, repetition=2)
    scope = f"{incident.fault.parameters['method']} {incident.fault.parameters['path']}"
    labels = _labels(incident)
    assert labels.gold_plan == RollbackConfig(
        operation="rollback_config", target="cartservice", scope=scope
    )
    for other in labels.action_space.scopes["cartservice"]:
        plan = RollbackConfig(operation="rollback_config", target="cartservice", scope=other)
        assert is_valid(plan, labels) is (other == scope)
    assert not is_valid(_restart("cartservice"), labels)


@pytest.mark.parametrize("service", ROOT_CAUSE_SERVICES)
@pytest.mark.parametrize("fault_type", [FaultType.DNS_FAULT, FaultType.DNS_RANDOM])
def test_dns_repair_on_the_service_or_any_caller_is_equivalent(
    service: str, fault_type: FaultType
) -> None:
    labels = _labels(make_incident(service, fault_type))
    endpoint = ONLINE_BOUTIQUE.deployment(service).endpoint
    assert labels.gold_plan == RepairDependency(
        operation="repair_dependency", target=service, dependency=endpoint
    )
    repair_points = {service} | set(ONLINE_BOUTIQUE.callers(service)) - {"loadgenerator"}
    for target in labels.action_space.targets:
        plan = RepairDependency(operation="repair_dependency", target=target, dependency=endpoint)
        assert is_valid(plan, labels) is (target in repair_points), target
    assert not is_valid(_restart(service), labels)


def test_dns_repair_of_another_dependency_is_an_invalid_scope() -> None:
    labels = _labels(make_incident("cartservice", FaultType.DNS_FAULT))
    scoped = [n for n in labels.invalid_plans if n.failure_mode == FailureMode.INVALID_SCOPE]
    assert scoped
    assert scoped[0].plan == RepairDependency(
        operation="repair_dependency", target="cartservice", dependency="redis-cart:6379"
    )


def test_no_action_is_never_valid() -> None:
    for incident in ALL:
        assert not is_valid(NoAction(operation="no_action"), _labels(incident))


def test_none_is_never_valid() -> None:
    assert not is_valid(None, _labels(ALL[0]))


def test_http_fault_on_a_route_that_does_not_reach_the_service_is_a_data_error() -> None:
    incident = make_incident(
        "paymentservice",
        FaultType.HTTP_ERROR,
        parameters={"method": "GET", "path": "/", "port": 8080, "code": 500},
    )
    with pytest.raises(DataError, match="does not reach paymentservice"):
        _labels(incident)


def test_http_scope_falls_back_to_a_recorded_scope_string() -> None:
    incident = make_incident(
        "paymentservice", FaultType.HTTP_ABORT, parameters={"scope": "POST /cart/checkout"}
    )
    gold: RecoveryPlan = _labels(incident).gold_plan
    assert isinstance(gold, RollbackConfig)
    assert gold.scope == "POST /cart/checkout"


def test_policy_string_follows_the_policy_object() -> None:
    custom = type(DEFAULT_POLICY)(name="strict", version=3, max_replicas=4)
    labels = label_incident(
        make_incident("cartservice", FaultType.CPU_SATURATION), ONLINE_BOUTIQUE, custom
    )
    assert labels.policy == "strict/3"
    assert labels.action_space.max_replicas == 4
    assert not is_valid(ScaleOut(operation="scale_out", target="cartservice", replicas=5), labels)
