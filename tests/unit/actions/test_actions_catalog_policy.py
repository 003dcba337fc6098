"""The catalogue matches the plan models; policies are named, versioned and selectable."""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from pathlib import Path

import pytest
import yaml

from r2act.actions import (
    DEFAULT_POLICY,
    MECHANICS_POLICY,
    OPERATION_CATALOG,
    PAPER_POLICY,
    POLICIES,
    RecoveryPolicy,
    Role,
    describe_operations,
    policy_named,
    primary_callers,
)
from r2act.errors import DataError
from r2act.schema import FaultType, Operation, RecoveryPlan
from r2act.systems import ONLINE_BOUTIQUE

MI = 2**20


def _plan_classes() -> dict[str, type]:
    union = typing.get_args(RecoveryPlan)[0]
    classes = typing.get_args(union)
    return {cls.model_fields["operation"].annotation.__args__[0]: cls for cls in classes}


def test_catalog_lists_every_operation_with_exactly_the_plan_model_fields() -> None:
    classes = _plan_classes()
    assert list(OPERATION_CATALOG) == list(Operation)
    for operation, spec in OPERATION_CATALOG.items():
        model_fields = [f for f in classes[operation.value].model_fields if f != "operation"]
        assert [f.name for f in spec.fields] == model_fields, operation


def test_operation_descriptions_name_every_signature_for_prompts() -> None:
    text = describe_operations()
    for spec in OPERATION_CATALOG.values():
        assert spec.signature() in text
    assert "scale_out(target, replicas)" in text


def test_the_default_policy_is_the_mechanics_one_and_both_are_named_and_versioned() -> None:
    assert DEFAULT_POLICY is MECHANICS_POLICY
    assert str(MECHANICS_POLICY) == "r2act-mechanics/3"
    assert str(PAPER_POLICY) == "paper-table-ii/1"
    assert set(POLICIES) == {"r2act-mechanics/3", "r2act-mechanics/2", "paper-table-ii/1"}
    assert RecoveryPolicy(name="r2act-mechanics", version=3, memory_headroom=0.2) == DEFAULT_POLICY
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_POLICY.version = 3  # type: ignore[misc]


def test_policies_are_found_by_name_with_or_without_version() -> None:
    assert policy_named("paper-table-ii/1") is PAPER_POLICY
    assert policy_named("r2act-mechanics") is MECHANICS_POLICY  # the newest version
    assert str(policy_named("r2act-mechanics/2")) == "r2act-mechanics/2"
    with pytest.raises(DataError, match=r"unknown policy 'r2act-default/1'.*r2act-mechanics/3"):
        policy_named("r2act-default/1")
    # version 1 assumed kept-alive users; its labels are not reproduced by any shipped policy
    with pytest.raises(DataError, match=r"unknown policy 'r2act-mechanics/1'"):
        policy_named("r2act-mechanics/1")


def test_mechanics_policy_follows_the_contract_table() -> None:
    expected = {
        FaultType.POD_FAILURE: [(Operation.RESTART_SERVICE, Role.SERVICE)],
        FaultType.NETWORK_DELAY: [(Operation.RESTART_SERVICE, Role.SERVICE)],
        FaultType.CPU_SATURATION: [
            (Operation.RESTART_SERVICE, Role.SERVICE),
            (Operation.SCALE_OUT, Role.SERVICE),  # on the entry point only (below)
        ],
        FaultType.HTTP_ERROR: [
            (Operation.ROLLBACK_CONFIG, Role.SERVICE),
            (Operation.RESTART_SERVICE, Role.SERVICE),
        ],
        FaultType.DNS_FAULT: [
            (Operation.REPAIR_DEPENDENCY, Role.ADDRESS_HOLDER),
            (Operation.ROLLBACK_DEPLOYMENT, Role.ADDRESS_HOLDER),
        ],
        FaultType.MEMORY_PRESSURE: [
            (Operation.INCREASE_MEMORY_LIMIT, Role.SERVICE),
            (Operation.ROLLBACK_DEPLOYMENT, Role.SERVICE),
        ],
    }
    for fault_type, rules in expected.items():
        got = [
            (r.operation, r.role) for r in MECHANICS_POLICY.rules_for(fault_type, ONLINE_BOUTIQUE)
        ]
        assert got == rules, fault_type
    table = MECHANICS_POLICY.table(ONLINE_BOUTIQUE)
    assert table[FaultType.HTTP_ABORT] == table[FaultType.HTTP_ERROR]
    assert table[FaultType.DNS_RANDOM] == table[FaultType.DNS_FAULT]


def test_scale_out_recovers_cpu_only_where_every_request_opens_a_new_connection() -> None:
    cpu = FaultType.CPU_SATURATION
    ops = [r.operation for r in MECHANICS_POLICY.rules_on(cpu, "frontend", ONLINE_BOUTIQUE)]
    assert ops == [Operation.RESTART_SERVICE, Operation.SCALE_OUT]
    # gRPC clients pin their connection: added backend pods get no traffic
    ops = [r.operation for r in MECHANICS_POLICY.rules_on(cpu, "cartservice", ONLINE_BOUTIQUE)]
    assert ops == [Operation.RESTART_SERVICE]
    # stock Locust keeps each user's connection: the frontend is pinned like a backend
    kept = ONLINE_BOUTIQUE.model_copy(update={"load_connection_reuse": True})
    ops = [r.operation for r in MECHANICS_POLICY.rules_on(cpu, "frontend", kept)]
    assert ops == [Operation.RESTART_SERVICE]
    for fault in (FaultType.POD_FAILURE, FaultType.NETWORK_DELAY):
        rules = MECHANICS_POLICY.rules_on(fault, "frontend", ONLINE_BOUTIQUE)
        assert [r.operation for r in rules] == [Operation.RESTART_SERVICE]


def test_paper_policy_keeps_table_ii() -> None:
    expected = {
        FaultType.POD_FAILURE: Operation.RESTART_SERVICE,
        FaultType.NETWORK_DELAY: Operation.RESTART_SERVICE,
        FaultType.CPU_SATURATION: Operation.SCALE_OUT,
        FaultType.MEMORY_PRESSURE: Operation.INCREASE_MEMORY_LIMIT,
        FaultType.HTTP_ERROR: Operation.ROLLBACK_CONFIG,
        FaultType.HTTP_ABORT: Operation.ROLLBACK_CONFIG,
        FaultType.DNS_FAULT: Operation.REPAIR_DEPENDENCY,
        FaultType.DNS_RANDOM: Operation.REPAIR_DEPENDENCY,
    }
    for fault_type, operation in expected.items():
        assert PAPER_POLICY.operation_for(fault_type, ONLINE_BOUTIQUE) == operation
        assert len(PAPER_POLICY.rules_for(fault_type, ONLINE_BOUTIQUE)) == 1


def test_memory_bounds_run_from_the_working_set_with_headroom_to_four_times_the_limit() -> None:
    cart = ONLINE_BOUTIQUE.deployment("cartservice")
    bounds = DEFAULT_POLICY.memory_bounds(cart)
    assert cart.main.working_set == "57Mi"  # 90% of the 64Mi request, rounded down
    assert bounds.working_set == 57 * MI
    assert (bounds.lowest, bounds.highest) == (math.ceil(57 * MI * 1.2), 512 * MI)
    # below the shipped 128Mi limit: 96Mi clears the working set and recovers
    assert bounds.lowest < 96 * MI < 128 * MI
    small = dataclasses.replace(DEFAULT_POLICY, max_memory_limit="64Mi")
    with pytest.raises(DataError, match="no memory limit"):
        small.memory_bounds(cart)


def test_older_policies_keep_their_manifest_memory_bounds() -> None:
    cart = ONLINE_BOUTIQUE.deployment("cartservice")
    for policy in (policy_named("r2act-mechanics/2"), PAPER_POLICY):
        bounds = policy.memory_bounds(cart)
        assert (bounds.lowest, bounds.highest, bounds.working_set) == (128 * MI + 1, 512 * MI, None)
    v2 = policy_named("r2act-mechanics/2")
    assert [r.role for r in v2.rules_for(FaultType.DNS_FAULT, ONLINE_BOUTIQUE)] == [
        Role.PRIMARY_CALLER
    ] * 2


def _release_env(reference: Path) -> dict[str, dict[str, str]]:
    """Deployment -> its containers' env (name -> value) from the release manifests."""
    env: dict[str, dict[str, str]] = {}
    for doc in yaml.safe_load_all(reference.read_text()):
        if not doc or doc.get("kind") != "Deployment":
            continue
        containers = doc["spec"]["template"]["spec"]["containers"]
        env[doc["metadata"]["name"]] = {
            e["name"]: e.get("value", "") for c in containers for e in c.get("env", [])
        }
    return env


def test_primary_callers_hold_the_services_address_in_the_release_manifests(
    reference_dir: Path,
) -> None:
    env = _release_env(reference_dir / "online-boutique" / "kubernetes-manifests.yaml")
    callers = primary_callers(ONLINE_BOUTIQUE)
    assert callers == {
        "adservice": "frontend",
        "currencyservice": "frontend",
        "cartservice": "frontend",
        "redis-cart": "cartservice",
        "recommendationservice": "frontend",
        "checkoutservice": "frontend",
        "emailservice": "checkoutservice",
        "paymentservice": "checkoutservice",
        "shippingservice": "frontend",
        "productcatalogservice": "frontend",
    }
    for service, caller in callers.items():
        found = ONLINE_BOUTIQUE.address_variable(service)
        assert found is not None
        _, variable, address = found
        assert re.fullmatch(r"[A-Z_]+_ADDR", variable)
        assert env[caller][variable] == address, (service, caller, variable)
        assert address.split(":")[0] == service
    assert ONLINE_BOUTIQUE.primary_caller("frontend") is None  # only the load generator


def test_address_holders_are_every_release_deployment_whose_env_holds_the_address(
    reference_dir: Path,
) -> None:
    env = _release_env(reference_dir / "online-boutique" / "kubernetes-manifests.yaml")
    for service in ONLINE_BOUTIQUE.names:
        endpoint = ONLINE_BOUTIQUE.deployment(service).endpoint
        expected = sorted(
            name
            for name, values in env.items()
            if name not in (service, "loadgenerator") and endpoint in values.values()
        )
        assert ONLINE_BOUTIQUE.address_holders(service) == expected, service
    # the three and two holders the paper-scale DNS cells draw from
    assert ONLINE_BOUTIQUE.address_holders("productcatalogservice") == [
        "checkoutservice",
        "frontend",
        "recommendationservice",
    ]
    assert ONLINE_BOUTIQUE.address_holders("cartservice") == ["checkoutservice", "frontend"]
