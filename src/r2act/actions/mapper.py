"""The paper's fixed RCA-to-action mapper: (service, fault type) -> a plan inside A.

It lets RCA-only methods be scored on recovery. It deliberately knows only the diagnosed
service and fault type, never the incident's parameters, so it reveals where a coarse
diagnosis is not enough: it cannot tell which route an HTTP rule sits on, which name a DNS
fault breaks, or whether a memory stress overflows the limit. Fields are filled from the
action space in its own order (first scope, first dependency), exactly as the paper says.

Well-formedness over cleverness: when the service is not a target of the action space, or
the space offers no value for a required field (no route or dependency for that service),
the mapper returns ``no_action``. That plan is never valid and is scored as a no-op, which
is what a mapper that cannot form a plan amounts to.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from r2act.schema import (
    ActionSpace,
    FaultType,
    IncreaseMemoryLimit,
    NoAction,
    Operation,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
    Topology,
    memory_bytes,
)

MAPPER_OPERATIONS: Mapping[FaultType, Operation] = MappingProxyType(
    {
        FaultType.POD_FAILURE: Operation.RESTART_SERVICE,
        FaultType.NETWORK_DELAY: Operation.RESTART_SERVICE,
        FaultType.CPU_SATURATION: Operation.SCALE_OUT,
        FaultType.MEMORY_PRESSURE: Operation.INCREASE_MEMORY_LIMIT,
        FaultType.HTTP_ERROR: Operation.ROLLBACK_CONFIG,
        FaultType.HTTP_ABORT: Operation.ROLLBACK_CONFIG,
        FaultType.DNS_FAULT: Operation.REPAIR_DEPENDENCY,
        FaultType.DNS_RANDOM: Operation.REPAIR_DEPENDENCY,
    }
)
"""The mapper's fixed fault-type policy (paper, section V)."""

_NO_ACTION = NoAction(operation="no_action")


def map_rca(
    service: str, fault_type: FaultType, action_space: ActionSpace, topology: Topology
) -> RecoveryPlan:
    """The plan the fixed policy derives from a diagnosed ``service`` and ``fault_type``.

    restart_service(S) for pod/network faults; scale_out(S, current + 1) for CPU;
    increase_memory_limit(S, 2 x current limit) for memory; rollback_config(S, first scope
    of S in A) for HTTP; repair_dependency(S, first dependency of S in A) for DNS. Replica
    counts and limits are clipped to the space's maxima so the plan stays inside A."""
    if service not in action_space.targets:
        return _NO_ACTION
    operation = MAPPER_OPERATIONS[FaultType(fault_type)]
    if operation == Operation.RESTART_SERVICE:
        return RestartService(operation="restart_service", target=service)
    if operation == Operation.SCALE_OUT:
        current = topology.deployment(service).replicas if service in topology.names else 1
        replicas = max(min(current + 1, action_space.max_replicas), action_space.min_replicas)
        return ScaleOut(operation="scale_out", target=service, replicas=replicas)
    if operation == Operation.INCREASE_MEMORY_LIMIT:
        return _doubled_limit(service, action_space)
    if operation == Operation.ROLLBACK_CONFIG:
        scopes = action_space.scopes.get(service, [])
        if not scopes:
            return _NO_ACTION
        return RollbackConfig(operation="rollback_config", target=service, scope=scopes[0])
    dependencies = action_space.dependencies.get(service, [])
    if not dependencies:
        return _NO_ACTION
    return RepairDependency(
        operation="repair_dependency", target=service, dependency=dependencies[0]
    )


def _doubled_limit(service: str, action_space: ActionSpace) -> RecoveryPlan:
    current = action_space.current_memory_limits.get(service)
    if current is None:
        return _NO_ACTION
    doubled = min(2 * memory_bytes(current), memory_bytes(action_space.max_memory_limit))
    return IncreaseMemoryLimit(
        operation="increase_memory_limit",
        target=service,
        memory_limit=f"{doubled // 2**20}Mi",
    )
