"""The RCA-to-action mapper: (service, fault type) -> the policy's plan for that pair.

It lets RCA-only methods be scored on recovery. It knows only the diagnosed service and
fault type, never the incident's parameters, and it never reads a list's order: it takes
the policy's rules for the fault type, gold first, and returns the first one whose plan is
fully determined by the pair:

- a restart, rollback or scale-out needs only its target (the service, or for DNS faults
  the primary caller: the pair does not say which caller holds the broken address, so the
  mapper takes the one every user request passes through, which is wrong whenever the
  fault sits in another holder);
- ``increase_memory_limit`` takes one 32Mi step above the service's shipped limit (the
  pair tells neither the lowered limit nor the working set; under ``r2act-mechanics/3`` this
  is valid exactly when the step clears the working set with the policy's headroom);
- ``repair_dependency`` takes the service's own endpoint (the name a DNS fault breaks);
- ``rollback_config`` needs the faulty route, which the pair does not tell; when the
  policy offers no other rule, the mapper takes the service's most-trafficked route
  (highest load generator weight, ties by name), the best guess a pair allows; for a
  feature flag it takes the service's first realizable flag in flag-file order
  (``first_flag``), wrong whenever the service has several and another one is on.

When the diagnosed service is not a target of the action space (or the rule's target is
not), or the system's rules know no such fault type (a diagnosis of ``feature_flag`` on a
system without flags), the mapper returns ``no_action``: a plan that is never valid,
which is what a mapper that cannot form a plan amounts to.
"""

from __future__ import annotations

from r2act.actions.policy import DEFAULT_POLICY, PlanRule, RecoveryPolicy, Role, primary_caller
from r2act.errors import DataError
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
    RollbackDeployment,
    ScaleOut,
    Topology,
    format_mebibytes,
    memory_bytes,
)
from r2act.schema.rules import ScopeKind

_NO_ACTION = NoAction(operation="no_action")
_STEP = 32 * 2**20


def map_rca(
    service: str,
    fault_type: FaultType,
    action_space: ActionSpace,
    topology: Topology,
    policy: RecoveryPolicy = DEFAULT_POLICY,
) -> RecoveryPlan:
    """The plan ``policy`` defines for a diagnosed ``service`` and ``fault_type``."""
    if service not in action_space.targets or service not in topology.names:
        return _NO_ACTION
    if not policy.table(topology).get(FaultType(fault_type)):
        return _NO_ACTION  # a fault type this system does not have (a flag on Online Boutique)
    rules = policy.rules_on(FaultType(fault_type), service, topology)
    needs_route = [r for r in rules if r.operation == Operation.ROLLBACK_CONFIG]  # or a flag
    for rule in [r for r in rules if r not in needs_route] + needs_route:
        plan = _plan(rule, service, action_space, topology)
        if plan is not None and action_space.contains(plan):
            return plan
    return _NO_ACTION


def _plan(
    rule: PlanRule, service: str, space: ActionSpace, topology: Topology
) -> RecoveryPlan | None:
    if rule.role in (Role.PRIMARY_CALLER, Role.ADDRESS_HOLDER):
        try:
            target = primary_caller(service, topology)
        except DataError:
            return None
    else:
        target = service
    operation = rule.operation
    if operation == Operation.RESTART_SERVICE:
        return RestartService(operation="restart_service", target=target)
    if operation == Operation.ROLLBACK_DEPLOYMENT:
        return RollbackDeployment(operation="rollback_deployment", target=target)
    if operation == Operation.SCALE_OUT:
        replicas = max(topology.deployment(target).replicas + 1, space.min_replicas)
        return ScaleOut(operation="scale_out", target=target, replicas=replicas)
    if operation == Operation.INCREASE_MEMORY_LIMIT:
        current = space.current_memory_limits.get(target)
        if current is None:
            return None
        limit = (memory_bytes(current) // _STEP + 1) * _STEP
        return IncreaseMemoryLimit(
            operation="increase_memory_limit", target=target, memory_limit=format_mebibytes(limit)
        )
    if operation == Operation.REPAIR_DEPENDENCY:
        endpoint = topology.deployment(service).endpoint
        if endpoint is None:
            return None
        return RepairDependency(operation="repair_dependency", target=target, dependency=endpoint)
    if operation == Operation.ROLLBACK_CONFIG and rule.scope == ScopeKind.FLAG:
        flag = first_flag(target, topology)
        if flag is None:
            return None
        return RollbackConfig(operation="rollback_config", target=target, scope=flag)
    if operation == Operation.ROLLBACK_CONFIG:
        routes = sorted(topology.routes_of(target), key=lambda r: (-r.weight, r.scope))
        if not routes:
            return None
        return RollbackConfig(operation="rollback_config", target=target, scope=routes[0].scope)
    return None


def first_flag(service: str, topology: Topology) -> str | None:
    """The flag the mapper reverts for a flag fault on ``service``: the first realizable
    flag of ``service`` in its system's flag-file order (else the first flag it reads).

    The pair (service, feature_flag) does not say which flag is on, so wherever a service
    has several (one Astronomy Shop service reads three) this guess is wrong for the others: the
    mapper's price for knowing only the pair, as for an HTTP rule's route."""
    # The registry imports every installed system: loaded on first use (as in the policy).
    from r2act.systems import system_of

    system = system_of(topology)
    realizable = system.realizable_flags(service)
    if realizable:
        return realizable[0].key
    read = system.flags_read_by(service)
    return read[0] if read else None
