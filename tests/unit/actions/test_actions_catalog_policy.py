"""The catalogue matches the plan models; the policy is named, versioned and decides memory."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from action_incidents import make_incident

from r2act.actions import (
    DEFAULT_POLICY,
    OPERATION_CATALOG,
    RecoveryPolicy,
    describe_operations,
    stress_bytes,
)
from r2act.errors import DataError
from r2act.schema import FaultType, Intensity, Operation, RecoveryPlan
from r2act.systems import ONLINE_BOUTIQUE

MB = 10**6
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


def test_default_policy_is_named_and_versioned() -> None:
    assert str(DEFAULT_POLICY) == "r2act-default/1"
    assert RecoveryPolicy(name="r2act-default", version=1) == DEFAULT_POLICY
    assert hash(DEFAULT_POLICY) == hash(RecoveryPolicy(name="r2act-default", version=1))
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_POLICY.version = 2  # type: ignore[misc]


def test_default_policy_follows_table_ii() -> None:
    frontend = ONLINE_BOUTIQUE.deployment("frontend")
    expected = {
        FaultType.POD_FAILURE: Operation.RESTART_SERVICE,
        FaultType.NETWORK_DELAY: Operation.RESTART_SERVICE,
        FaultType.CPU_SATURATION: Operation.SCALE_OUT,
        FaultType.HTTP_ERROR: Operation.ROLLBACK_CONFIG,
        FaultType.HTTP_ABORT: Operation.ROLLBACK_CONFIG,
        FaultType.DNS_FAULT: Operation.REPAIR_DEPENDENCY,
        FaultType.DNS_RANDOM: Operation.REPAIR_DEPENDENCY,
    }
    for fault_type, operation in expected.items():
        fault = make_incident("frontend", fault_type).fault
        assert DEFAULT_POLICY.operation_for(fault, frontend) == operation


@pytest.mark.parametrize(
    ("size", "expected"),
    [("192MB", 192 * MB), ("1GB", 10**9), ("64MiB", 64 * MI), ("512KB", 512_000), ("7", 7)],
)
def test_stress_size_reads_decimal_and_binary_units(size: str, expected: int) -> None:
    assert stress_bytes({"size": size}) == expected


@pytest.mark.parametrize("size", [None, "", "50%", "12XB", 192, "-5MB"])
def test_unreadable_stress_size_is_a_data_error(size: object) -> None:
    with pytest.raises(DataError, match="size"):
        stress_bytes({"size": size})  # type: ignore[dict-item]


def _memory_incident(service: str, size: str) -> Operation:
    fault = make_incident(
        service, FaultType.MEMORY_PRESSURE, parameters={"workers": 1, "size": size}
    ).fault
    return DEFAULT_POLICY.operation_for(fault, ONLINE_BOUTIQUE.deployment(service))


def test_memory_needs_a_larger_limit_only_when_request_plus_stress_exceeds_it() -> None:
    # frontend: request 64Mi, limit 128Mi -> headroom exactly 64Mi.
    assert _memory_incident("frontend", f"{64 * MI}") == Operation.RESTART_SERVICE
    assert _memory_incident("frontend", f"{64 * MI + 1}") == Operation.INCREASE_MEMORY_LIMIT
    assert _memory_incident("frontend", "40MB") == Operation.RESTART_SERVICE
    assert _memory_incident("frontend", "160MB") == Operation.INCREASE_MEMORY_LIMIT
    # recommendationservice has 230Mi of headroom: a 160MB stress still fits.
    assert _memory_incident("recommendationservice", "160MB") == Operation.RESTART_SERVICE


def test_memory_bounds_hold_request_plus_stress_plus_margin_up_to_four_times_the_limit() -> None:
    fault = make_incident(
        "cartservice", FaultType.MEMORY_PRESSURE, Intensity.SEVERE, 3
    ).fault  # 384MB
    bounds = DEFAULT_POLICY.memory_bounds(fault, ONLINE_BOUTIQUE.deployment("cartservice"))
    assert bounds.lowest == 64 * MI + 384 * MB + 16 * MI
    assert bounds.highest == 4 * 128 * MI


def test_a_stress_no_admissible_limit_can_hold_is_a_data_error() -> None:
    fault = make_incident(
        "frontend", FaultType.MEMORY_PRESSURE, parameters={"workers": 1, "size": "3GB"}
    ).fault
    with pytest.raises(DataError, match="allows at most"):
        DEFAULT_POLICY.memory_bounds(fault, ONLINE_BOUTIQUE.deployment("frontend"))
