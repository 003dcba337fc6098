"""The mapper: (service, fault type) -> the policy's plan for the pair, in no list's order."""

from __future__ import annotations

import pytest
from action_incidents import ROOT_CAUSE_SERVICES, every_incident_kind, make_incident

from r2act.actions import (
    DEFAULT_POLICY,
    PAPER_POLICY,
    RecoveryPolicy,
    is_valid,
    label_incident,
    map_rca,
)
from r2act.schema import (
    ActionSpace,
    FaultType,
    IncreaseMemoryLimit,
    NoAction,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
)
from r2act.systems import ONLINE_BOUTIQUE, get_system


def _space() -> ActionSpace:
    return label_incident(
        make_incident("cartservice", FaultType.POD_FAILURE), ONLINE_BOUTIQUE
    ).action_space


def test_mapper_gives_the_mechanics_plan_for_each_pair() -> None:
    space = _space()

    def mapped(service: str, fault_type: FaultType) -> object:
        return map_rca(service, fault_type, space, ONLINE_BOUTIQUE)

    restart = RestartService(operation="restart_service", target="cartservice")
    assert mapped("cartservice", FaultType.POD_FAILURE) == restart
    assert mapped("cartservice", FaultType.NETWORK_DELAY) == restart
    assert mapped("cartservice", FaultType.CPU_SATURATION) == restart
    assert mapped("cartservice", FaultType.MEMORY_PRESSURE) == IncreaseMemoryLimit(
        operation="increase_memory_limit", target="cartservice", memory_limit="160Mi"
    )
    assert mapped("cartservice", FaultType.DNS_RANDOM) == RepairDependency(
        operation="repair_dependency", target="frontend", dependency="cartservice:7070"
    )
    assert mapped("paymentservice", FaultType.DNS_FAULT) == RepairDependency(
        operation="repair_dependency", target="checkoutservice", dependency="paymentservice:50051"
    )
    # the route is an incident detail; the restart the policy also accepts is not
    assert mapped("frontend", FaultType.HTTP_ERROR) == RestartService(
        operation="restart_service", target="frontend"
    )


def test_under_table_ii_the_mapper_guesses_the_most_trafficked_route() -> None:
    space = _space()
    plan = map_rca("frontend", FaultType.HTTP_ABORT, space, ONLINE_BOUTIQUE, PAPER_POLICY)
    assert plan == RollbackConfig(
        operation="rollback_config", target="frontend", scope="GET /product/*"
    )
    assert map_rca(
        "cartservice", FaultType.CPU_SATURATION, space, ONLINE_BOUTIQUE, PAPER_POLICY
    ) == ScaleOut(operation="scale_out", target="cartservice", replicas=2)
    assert map_rca(
        "cartservice", FaultType.DNS_FAULT, space, ONLINE_BOUTIQUE, PAPER_POLICY
    ) == RepairDependency(
        operation="repair_dependency", target="cartservice", dependency="cartservice:7070"
    )


def test_mapper_does_not_depend_on_the_order_of_the_action_space_lists() -> None:
    space = _space()
    shuffled = space.model_copy(
        update={
            "targets": list(reversed(space.targets)),
            "scopes": {k: list(reversed(v)) for k, v in space.scopes.items()},
            "dependencies": {k: list(reversed(v)) for k, v in space.dependencies.items()},
        }
    )
    for service in ROOT_CAUSE_SERVICES:
        for fault_type in get_system("onlineboutique").fault_types:
            for policy in (DEFAULT_POLICY, PAPER_POLICY):
                assert map_rca(service, fault_type, space, ONLINE_BOUTIQUE, policy) == map_rca(
                    service, fault_type, shuffled, ONLINE_BOUTIQUE, policy
                )


@pytest.mark.parametrize("incident", every_incident_kind(), ids=lambda i: i.id)
def test_gold_rca_through_the_mapper_fails_exactly_where_the_evidence_decides(
    incident: object,
) -> None:
    labels = label_incident(incident, ONLINE_BOUTIQUE)  # type: ignore[arg-type]
    service, fault = incident.service, incident.fault.type  # type: ignore[attr-defined]
    plan = map_rca(service, fault, labels.action_space, ONLINE_BOUTIQUE)
    caller = incident.fault.parameters.get("caller")  # type: ignore[attr-defined]
    # the pair cannot tell which caller holds a broken address: the mapper repairs the
    # primary caller, valid only where the fault sits there; every other plan is valid
    expected = caller is None or caller == ONLINE_BOUTIQUE.primary_caller(service)
    assert is_valid(plan, labels) is expected


def _paper_valid(policy: RecoveryPolicy, fault_type: FaultType, repetition: int) -> bool:
    labels = label_incident(
        make_incident("frontend", fault_type, repetition=repetition), ONLINE_BOUTIQUE, policy
    )
    plan = map_rca("frontend", fault_type, labels.action_space, ONLINE_BOUTIQUE, policy)
    return is_valid(plan, labels)


def test_under_table_ii_the_guessed_route_is_right_only_for_that_route() -> None:
    outcomes = [_paper_valid(PAPER_POLICY, FaultType.HTTP_ERROR, r) for r in range(1, 7)]
    assert outcomes.count(True) == 1


def test_unknown_or_fieldless_service_maps_to_no_action() -> None:
    space = _space()
    no_action = NoAction(operation="no_action")
    assert map_rca("nosuchservice", FaultType.POD_FAILURE, space, ONLINE_BOUTIQUE) == no_action
    assert map_rca("loadgenerator", FaultType.POD_FAILURE, space, ONLINE_BOUTIQUE) == no_action
    # the frontend has no primary caller, so a DNS diagnosis on it forms no plan
    assert map_rca("frontend", FaultType.DNS_FAULT, space, ONLINE_BOUTIQUE) == no_action


@pytest.mark.parametrize("service", [*ROOT_CAUSE_SERVICES, "redis-cart", "emailservice"])
@pytest.mark.parametrize("fault_type", list(get_system("onlineboutique").fault_types))
@pytest.mark.parametrize("policy", [DEFAULT_POLICY, PAPER_POLICY], ids=str)
def test_mapped_plans_always_lie_inside_the_action_space(
    service: str, fault_type: FaultType, policy: RecoveryPolicy
) -> None:
    space = _space()
    assert space.contains(map_rca(service, fault_type, space, ONLINE_BOUTIQUE, policy))
