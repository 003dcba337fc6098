"""The action space is read off the deployment state and shared by a system's incidents."""

from __future__ import annotations

import pytest
from action_incidents import make_incident

from r2act.actions import action_space, in_action_space, system_action_space
from r2act.errors import DataError
from r2act.schema import (
    FaultType,
    IncreaseMemoryLimit,
    Operation,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
)
from r2act.systems import ONLINE_BOUTIQUE

SPACE = system_action_space(ONLINE_BOUTIQUE)


def test_targets_are_every_deployment_but_the_load_generator() -> None:
    assert "loadgenerator" not in SPACE.targets
    assert set(SPACE.targets) == set(ONLINE_BOUTIQUE.names) - {"loadgenerator"}
    assert SPACE.operations == list(Operation)


def test_bounds_come_from_policy_and_current_state() -> None:
    assert (SPACE.min_replicas, SPACE.max_replicas) == (2, 10)
    assert SPACE.max_memory_limit == "2Gi"
    assert SPACE.current_memory_limits["recommendationservice"] == "450Mi"


def test_scopes_are_the_entry_point_routes_each_service_sits_on() -> None:
    assert SPACE.scopes["frontend"] == [r.scope for r in ONLINE_BOUTIQUE.routes]
    assert SPACE.scopes["paymentservice"] == ["POST /cart/checkout"]
    assert "redis-cart" not in SPACE.scopes


def test_dependencies_are_called_endpoints_then_the_service_own_endpoint() -> None:
    assert SPACE.dependencies["cartservice"] == ["redis-cart:6379", "cartservice:7070"]
    assert SPACE.dependencies["paymentservice"] == ["paymentservice:50051"]
    assert SPACE.dependencies["frontend"][-1] == "frontend:80"
    assert len(SPACE.dependencies["frontend"]) == 8


def test_every_incident_of_a_system_shares_its_space() -> None:
    one = action_space(make_incident("cartservice", FaultType.DNS_FAULT), ONLINE_BOUTIQUE)
    other = action_space(make_incident("frontend", FaultType.CPU_SATURATION), ONLINE_BOUTIQUE)
    assert one == other == SPACE


def test_incident_on_a_service_the_system_lacks_is_a_data_error() -> None:
    incident = make_incident("cartservice", FaultType.POD_FAILURE).model_copy(
        update={"service": "loadgenerator"}
    )
    with pytest.raises(DataError, match="loadgenerator"):
        action_space(incident, ONLINE_BOUTIQUE)
    foreign = make_incident("cartservice", FaultType.POD_FAILURE).model_copy(
        update={"system": "sockshop"}
    )
    with pytest.raises(DataError, match="sockshop"):
        action_space(foreign, ONLINE_BOUTIQUE)


@pytest.mark.parametrize(
    ("plan", "inside"),
    [
        (RestartService(operation="restart_service", target="cartservice"), True),
        (RestartService(operation="restart_service", target="loadgenerator"), False),
        (RestartService(operation="restart_service", target="nosuchservice"), False),
        (ScaleOut(operation="scale_out", target="cartservice", replicas=10), True),
        (ScaleOut(operation="scale_out", target="cartservice", replicas=11), False),
        (ScaleOut(operation="scale_out", target="cartservice", replicas=1), False),
        (
            IncreaseMemoryLimit(
                operation="increase_memory_limit", target="cartservice", memory_limit="96Mi"
            ),
            True,  # under the shipped 128Mi: whether it recovers is P+'s question
        ),
        (
            IncreaseMemoryLimit(
                operation="increase_memory_limit", target="cartservice", memory_limit="3Gi"
            ),
            False,
        ),
        (
            RollbackConfig(operation="rollback_config", target="paymentservice", scope="GET /cart"),
            False,
        ),
        (
            RepairDependency(
                operation="repair_dependency",
                target="checkoutservice",
                dependency="paymentservice:50051",
            ),
            True,
        ),
        (
            RepairDependency(
                operation="repair_dependency", target="cartservice", dependency="frontend:80"
            ),
            False,
        ),
    ],
)
def test_in_action_space_checks_every_field(plan: RecoveryPlan, inside: bool) -> None:
    assert in_action_space(plan, SPACE) is inside
