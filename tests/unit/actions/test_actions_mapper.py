"""The fixed RCA-to-action mapper: right where coarse diagnosis suffices, wrong elsewhere."""

from __future__ import annotations

import pytest
from action_incidents import ROOT_CAUSE_SERVICES, make_incident

from r2act.actions import MAPPER_OPERATIONS, is_valid, label_incident, map_rca
from r2act.schema import (
    FaultType,
    IncreaseMemoryLimit,
    Intensity,
    NoAction,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
)
from r2act.systems import ONLINE_BOUTIQUE

SERVICES_WITH_DEPENDENCIES = [s for s in ROOT_CAUSE_SERVICES if ONLINE_BOUTIQUE.dependencies(s)]
LEAF_SERVICES = [s for s in ROOT_CAUSE_SERVICES if not ONLINE_BOUTIQUE.dependencies(s)]


def _mapped_validity(
    service: str, fault_type: FaultType, intensity: Intensity, repetition: int = 1
) -> bool:
    labels = label_incident(
        make_incident(service, fault_type, intensity, repetition), ONLINE_BOUTIQUE
    )
    plan = map_rca(service, fault_type, labels.action_space, ONLINE_BOUTIQUE)
    return is_valid(plan, labels)


def test_mapper_fills_fields_from_the_action_space_in_its_order() -> None:
    space = label_incident(
        make_incident("cartservice", FaultType.POD_FAILURE), ONLINE_BOUTIQUE
    ).action_space

    def mapped(fault_type: FaultType) -> object:
        return map_rca("cartservice", fault_type, space, ONLINE_BOUTIQUE)

    assert mapped(FaultType.POD_FAILURE) == RestartService(
        operation="restart_service", target="cartservice"
    )
    assert mapped(FaultType.NETWORK_DELAY) == mapped(FaultType.POD_FAILURE)
    assert mapped(FaultType.CPU_SATURATION) == ScaleOut(
        operation="scale_out", target="cartservice", replicas=2
    )
    assert mapped(FaultType.MEMORY_PRESSURE) == IncreaseMemoryLimit(
        operation="increase_memory_limit", target="cartservice", memory_limit="256Mi"
    )
    assert mapped(FaultType.HTTP_ERROR) == RollbackConfig(
        operation="rollback_config", target="cartservice", scope=space.scopes["cartservice"][0]
    )
    assert mapped(FaultType.DNS_RANDOM) == RepairDependency(
        operation="repair_dependency", target="cartservice", dependency="redis-cart:6379"
    )
    assert set(MAPPER_OPERATIONS) == set(FaultType)


@pytest.mark.parametrize("service", ROOT_CAUSE_SERVICES)
@pytest.mark.parametrize(
    "fault_type", [FaultType.POD_FAILURE, FaultType.NETWORK_DELAY, FaultType.CPU_SATURATION]
)
def test_mapper_is_valid_where_the_fault_type_decides_the_plan(
    service: str, fault_type: FaultType
) -> None:
    for intensity in Intensity:
        assert _mapped_validity(service, fault_type, intensity)


@pytest.mark.parametrize("service", ROOT_CAUSE_SERVICES)
def test_mapper_is_invalid_on_moderate_memory_pressure(service: str) -> None:
    for repetition in (1, 2):
        assert not _mapped_validity(
            service, FaultType.MEMORY_PRESSURE, Intensity.MODERATE, repetition
        )


def test_doubling_the_limit_recovers_some_severe_memory_incidents_but_not_all() -> None:
    outcomes = {
        _mapped_validity(service, FaultType.MEMORY_PRESSURE, Intensity.SEVERE, repetition)
        for service in ROOT_CAUSE_SERVICES
        for repetition in (1, 2, 3)
    }
    assert outcomes == {True, False}


@pytest.mark.parametrize("service", SERVICES_WITH_DEPENDENCIES)
@pytest.mark.parametrize("fault_type", [FaultType.DNS_FAULT, FaultType.DNS_RANDOM])
def test_mapper_is_invalid_on_dns_for_a_service_with_dependencies(
    service: str, fault_type: FaultType
) -> None:
    assert not _mapped_validity(service, fault_type, Intensity.SEVERE)


@pytest.mark.parametrize("service", LEAF_SERVICES)
def test_mapper_is_valid_on_dns_for_a_leaf_service(service: str) -> None:
    assert LEAF_SERVICES  # productcatalogservice and paymentservice call nothing
    assert _mapped_validity(service, FaultType.DNS_FAULT, Intensity.MODERATE)


def test_mapper_hits_the_http_route_only_when_it_is_the_first_one() -> None:
    assert _mapped_validity("cartservice", FaultType.HTTP_ERROR, Intensity.MODERATE, 1)
    assert not _mapped_validity("cartservice", FaultType.HTTP_ERROR, Intensity.MODERATE, 2)


def test_unknown_or_fieldless_service_maps_to_no_action() -> None:
    space = label_incident(
        make_incident("cartservice", FaultType.POD_FAILURE), ONLINE_BOUTIQUE
    ).action_space
    no_action = NoAction(operation="no_action")
    assert map_rca("nosuchservice", FaultType.POD_FAILURE, space, ONLINE_BOUTIQUE) == no_action
    assert map_rca("loadgenerator", FaultType.POD_FAILURE, space, ONLINE_BOUTIQUE) == no_action
    # redis-cart is on no entry-point route, so there is no scope to roll back.
    assert map_rca("redis-cart", FaultType.HTTP_ABORT, space, ONLINE_BOUTIQUE) == no_action


@pytest.mark.parametrize("service", [*ROOT_CAUSE_SERVICES, "redis-cart", "emailservice"])
@pytest.mark.parametrize("fault_type", list(FaultType))
def test_mapped_plans_always_lie_inside_the_action_space(
    service: str, fault_type: FaultType
) -> None:
    space = label_incident(
        make_incident("cartservice", FaultType.POD_FAILURE), ONLINE_BOUTIQUE
    ).action_space
    assert space.contains(map_rca(service, fault_type, space, ONLINE_BOUTIQUE))
