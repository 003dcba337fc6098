"""Gold plans, P+ and P- per fault type follow the mechanics policy (and Table II on demand)."""

from __future__ import annotations

from collections import Counter

import pytest
from action_incidents import ROOT_CAUSE_SERVICES, every_incident_kind, make_incident, realizable
from pydantic import ValidationError

from r2act.actions import (
    DEFAULT_POLICY,
    PAPER_POLICY,
    POLICIES,
    IncidentLabels,
    RecoveryPolicy,
    is_valid,
    label_incident,
    policy_named,
)
from r2act.errors import DataError
from r2act.schema import (
    FailureMode,
    FaultType,
    IncreaseMemoryLimit,
    Intensity,
    NoAction,
    PlannedIncident,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
)
from r2act.systems import ONLINE_BOUTIQUE

ALL = every_incident_kind()


def _labels(incident: PlannedIncident, policy: RecoveryPolicy = DEFAULT_POLICY) -> IncidentLabels:
    return label_incident(incident, ONLINE_BOUTIQUE, policy)


def _restart(target: str) -> RestartService:
    return RestartService(operation="restart_service", target=target)


def _rollback(target: str) -> RollbackDeployment:
    return RollbackDeployment(operation="rollback_deployment", target=target)


def _memory(target: str, limit: str) -> IncreaseMemoryLimit:
    return IncreaseMemoryLimit(operation="increase_memory_limit", target=target, memory_limit=limit)


@pytest.mark.parametrize("policy", list(POLICIES.values()), ids=str)
@pytest.mark.parametrize("incident", ALL, ids=lambda i: i.id)
def test_gold_is_valid_and_exactly_two_negatives_are_invalid(
    incident: PlannedIncident, policy: RecoveryPolicy
) -> None:
    labels = _labels(incident, policy)
    assert is_valid(labels.gold_plan, labels)
    assert labels.policy == str(policy)
    assert len(labels.invalid_plans) == 2
    assert labels.invalid_plans[0] != labels.invalid_plans[1]
    for negative in labels.invalid_plans:
        assert not is_valid(negative.plan, labels), negative
        assert not any(p.matches(negative.plan) for p in labels.valid_plans), negative
        assert labels.action_space.contains(negative.plan), negative
        assert negative.rationale


def test_negatives_are_mistakes_of_operation_target_or_scope_not_idleness() -> None:
    modes = Counter(n.failure_mode for i in ALL for n in _labels(i).invalid_plans)
    assert set(modes) == {
        FailureMode.WRONG_OPERATION,
        FailureMode.WRONG_TARGET,
        FailureMode.INVALID_SCOPE,
    }


def test_labels_are_deterministic_and_frozen() -> None:
    incident = make_incident("cartservice", FaultType.MEMORY_PRESSURE, Intensity.SEVERE, 2)
    labels = _labels(incident)
    assert labels == _labels(incident)
    with pytest.raises(ValidationError):
        labels.policy = "other/1"  # type: ignore[misc]


@pytest.mark.parametrize(
    "fault_type", [FaultType.POD_FAILURE, FaultType.NETWORK_DELAY, FaultType.CPU_SATURATION]
)
def test_pod_delay_and_cpu_faults_are_recovered_by_a_restart_not_by_replicas(
    fault_type: FaultType,
) -> None:
    labels = _labels(make_incident("checkoutservice", fault_type))
    assert labels.gold_plan == _restart("checkoutservice")
    assert [n.plan for n in labels.invalid_plans] == [
        ScaleOut(operation="scale_out", target="checkoutservice", replicas=2),
        _restart("frontend"),  # the primary caller shows the symptoms
    ]
    assert not is_valid(_restart("frontend"), labels)


@pytest.mark.parametrize(("intensity", "workers"), [(Intensity.MODERATE, 1), (Intensity.SEVERE, 2)])
def test_cpu_on_the_frontend_is_also_recovered_by_more_pods_than_stressor_workers(
    intensity: Intensity, workers: int
) -> None:
    incident = make_incident("frontend", FaultType.CPU_SATURATION, intensity)
    assert incident.fault.parameters["workers"] == workers
    labels = _labels(incident)
    assert labels.gold_plan == _restart("frontend")
    for replicas in range(1, 13):
        plan = ScaleOut(operation="scale_out", target="frontend", replicas=replicas)
        assert is_valid(plan, labels) is (workers + 1 <= replicas <= 10), replicas
    negatives = [n.plan for n in labels.invalid_plans]
    assert len(negatives) == 2
    if workers == 1:  # two pods already recover: the next candidates take their place
        assert negatives == [
            _restart("adservice"),
            RollbackConfig(operation="rollback_config", target="frontend", scope="GET /product/*"),
        ]
    else:  # two pods leave the stressed one half the users' requests
        assert negatives[0] == ScaleOut(operation="scale_out", target="frontend", replicas=2)
        assert "1/2 of users' requests" in labels.invalid_plans[0].rationale


@pytest.mark.parametrize("fault_type", [FaultType.POD_FAILURE, FaultType.NETWORK_DELAY])
def test_pod_and_delay_faults_on_the_frontend_are_not_recovered_by_more_pods(
    fault_type: FaultType,
) -> None:
    labels = _labels(make_incident("frontend", fault_type, Intensity.SEVERE))
    scale = ScaleOut(operation="scale_out", target="frontend", replicas=2)
    assert labels.invalid_plans[0].plan == scale
    assert not any(is_valid(scale.model_copy(update={"replicas": n}), labels) for n in range(2, 11))


def test_cpu_saturation_under_table_ii_accepts_any_replica_count_from_two_to_ten() -> None:
    incident = make_incident("paymentservice", FaultType.CPU_SATURATION, Intensity.SEVERE)
    labels = _labels(incident, PAPER_POLICY)
    assert labels.gold_plan == ScaleOut(operation="scale_out", target="paymentservice", replicas=2)
    for replicas in range(1, 13):
        plan = ScaleOut(operation="scale_out", target="paymentservice", replicas=replicas)
        assert is_valid(plan, labels) is (2 <= replicas <= 10), replicas
    assert not is_valid(_restart("paymentservice"), labels)
    assert _restart("paymentservice") in [n.plan for n in labels.invalid_plans]


@pytest.mark.parametrize("intensity", list(Intensity))
def test_memory_pressure_needs_the_limit_back_or_the_previous_template(
    intensity: Intensity,
) -> None:
    incident = make_incident("frontend", FaultType.MEMORY_PRESSURE, intensity)
    labels = _labels(incident)
    # the working set under load is 57Mi; with 20% headroom a limit must reach 68.4Mi
    assert labels.gold_plan == _memory("frontend", "96Mi")  # up to a 32Mi step, under 128Mi
    assert is_valid(_memory("frontend", "69Mi"), labels)
    assert not is_valid(_memory("frontend", "68Mi"), labels)  # under the headroom
    assert is_valid(_memory("frontend", "128Mi"), labels)  # the shipped limit clears it too
    assert is_valid(_memory("frontend", "512Mi"), labels)  # the 4x ceiling is inclusive
    assert not is_valid(_memory("frontend", "513Mi"), labels)
    assert is_valid(_rollback("frontend"), labels)
    assert not is_valid(_restart("frontend"), labels)  # keeps the lowered limit
    # the near miss first: above the lowered limit, under the working set
    lowered = incident.fault.parameters["memory_limit"]
    assert labels.invalid_plans[0].plan == _memory("frontend", "56Mi"), lowered
    assert labels.invalid_plans[0].failure_mode == FailureMode.INVALID_SCOPE
    assert labels.invalid_plans[1].plan == _restart("frontend")


def test_memory_near_miss_is_one_step_above_the_lowered_limit_when_that_stays_under() -> None:
    # recommendationservice: 198Mi working set; a 110Mi limit + 32Mi is still under it
    incident = make_incident(
        "recommendationservice",
        FaultType.MEMORY_PRESSURE,
        parameters={"container": "server", "memory_limit": "110Mi"},
    )
    labels = _labels(incident)
    assert labels.invalid_plans[0].plan == _memory("recommendationservice", "142Mi")
    assert not is_valid(_memory("recommendationservice", "142Mi"), labels)
    assert is_valid(labels.gold_plan, labels)
    assert labels.gold_plan == _memory("recommendationservice", "256Mi")  # 198 x 1.2 = 237.6


@pytest.mark.parametrize("fault_type", [FaultType.HTTP_ERROR, FaultType.HTTP_ABORT])
@pytest.mark.parametrize("repetition", [1, 2, 3, 4, 5, 6])
def test_http_faults_are_frontend_faults_rolled_back_on_exactly_their_route(
    fault_type: FaultType, repetition: int
) -> None:
    incident = make_incident("frontend", fault_type, repetition=repetition)
    scope = f"{incident.fault.parameters['method']} {incident.fault.parameters['path']}"
    labels = _labels(incident)
    assert labels.gold_plan == RollbackConfig(
        operation="rollback_config", target="frontend", scope=scope
    )
    for other in labels.action_space.scopes["frontend"]:
        plan = RollbackConfig(operation="rollback_config", target="frontend", scope=other)
        assert is_valid(plan, labels) is (other == scope)
    assert is_valid(_restart("frontend"), labels)  # new pods are not injected
    for backend in labels.action_space.targets:
        if backend != "frontend":
            assert not is_valid(_restart(backend), labels)
    assert not is_valid(_restart("frontend"), _labels(incident, PAPER_POLICY))


@pytest.mark.parametrize(
    "service", [s for s in ROOT_CAUSE_SERVICES if realizable(s, FaultType.DNS_FAULT)]
)
@pytest.mark.parametrize("fault_type", [FaultType.DNS_FAULT, FaultType.DNS_RANDOM])
@pytest.mark.parametrize("repetition", [1, 2, 3])
def test_dns_faults_are_repaired_in_the_caller_holding_the_broken_address_only(
    service: str, fault_type: FaultType, repetition: int
) -> None:
    incident = make_incident(service, fault_type, repetition=repetition)
    labels = _labels(incident)
    endpoint = ONLINE_BOUTIQUE.deployment(service).endpoint
    caller = incident.fault.parameters["caller"]
    assert isinstance(caller, str) and caller in ONLINE_BOUTIQUE.address_holders(service)
    assert labels.gold_plan == RepairDependency(
        operation="repair_dependency", target=caller, dependency=endpoint
    )
    for target in labels.action_space.targets:
        plan = RepairDependency(operation="repair_dependency", target=target, dependency=endpoint)
        assert is_valid(plan, labels) is (target == caller), target
    assert is_valid(_rollback(caller), labels)
    assert not is_valid(_restart(service), labels)
    assert not is_valid(_restart(caller), labels)  # keeps the broken variable
    others = [c for c in ONLINE_BOUTIQUE.address_holders(service) if c != caller]
    if others:  # the near miss: the right repair on a holder whose value is right
        first = labels.invalid_plans[0]
        assert first.failure_mode == FailureMode.WRONG_TARGET
        assert isinstance(first.plan, RepairDependency) and first.plan.target in others
    # version 2 always repaired the primary caller, whoever held the broken value
    old = _labels(incident, policy_named("r2act-mechanics/2"))
    primary = ONLINE_BOUTIQUE.primary_caller(service)
    assert old.gold_plan == RepairDependency(
        operation="repair_dependency", target=primary, dependency=endpoint
    )


def test_dns_under_table_ii_repairs_the_name_on_the_service_or_any_caller() -> None:
    labels = _labels(make_incident("cartservice", FaultType.DNS_FAULT), PAPER_POLICY)
    repair = [
        t
        for t in labels.action_space.targets
        if is_valid(
            RepairDependency(
                operation="repair_dependency", target=t, dependency="cartservice:7070"
            ),
            labels,
        )
    ]
    assert sorted(repair) == ["cartservice", "checkoutservice", "frontend"]
    assert labels.gold_plan == RepairDependency(
        operation="repair_dependency", target="cartservice", dependency="cartservice:7070"
    )


def test_dns_on_a_caller_that_holds_no_address_of_the_service_is_a_data_error() -> None:
    incident = make_incident(
        "frontend", FaultType.DNS_FAULT, parameters={"caller": "loadgenerator"}
    )
    with pytest.raises(DataError, match="'loadgenerator' holds no address of frontend"):
        _labels(incident)
    incident = make_incident("cartservice", FaultType.DNS_FAULT, parameters={})
    with pytest.raises(DataError, match="name no caller"):
        _labels(incident)


def test_no_action_is_never_valid() -> None:
    for incident in ALL:
        for policy in POLICIES.values():
            assert not is_valid(NoAction(operation="no_action"), _labels(incident, policy))


def test_none_is_never_valid() -> None:
    assert not is_valid(None, _labels(ALL[0]))


def test_http_fault_on_a_route_the_target_does_not_serve_is_a_data_error() -> None:
    incident = make_incident(
        "paymentservice",
        FaultType.HTTP_ERROR,
        parameters={"method": "GET", "path": "/", "port": 8080, "code": 500},
    )
    with pytest.raises(DataError, match="not a route of paymentservice"):
        _labels(incident)


def test_http_scope_falls_back_to_a_recorded_scope_string() -> None:
    incident = make_incident(
        "frontend", FaultType.HTTP_ABORT, parameters={"scope": "POST /cart/checkout"}
    )
    gold = _labels(incident).gold_plan
    assert isinstance(gold, RollbackConfig)
    assert gold.scope == "POST /cart/checkout"


def test_policy_string_follows_the_policy_object() -> None:
    custom = type(PAPER_POLICY)(name="strict", version=3, rules=PAPER_POLICY.rules, max_replicas=4)
    labels = label_incident(
        make_incident("cartservice", FaultType.CPU_SATURATION), ONLINE_BOUTIQUE, custom
    )
    assert labels.policy == "strict/3"
    assert labels.action_space.max_replicas == 4
    assert not is_valid(ScaleOut(operation="scale_out", target="cartservice", replicas=5), labels)
