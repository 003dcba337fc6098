"""Recovery labels of one incident: action space, gold plan, P+ patterns and P- plans.

``label_incident`` is the single entry point. The gold plan is the canonical valid plan
(what Exact Match compares against); P+ widens it to every plan the policy says recovers
(one pattern per rule, replica counts and memory limits as bounds), so scoring never
depends on a surface form; P- lists two plausible mistakes (``r2act.actions.negatives``).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from r2act.actions.injected import (
    address_holder,
    broken_caller,
    broken_endpoint,
    injected_flag,
    injected_scope,
    stress_workers,
)
from r2act.actions.negatives import invalid_plans
from r2act.actions.policy import DEFAULT_POLICY, PlanRule, RecoveryPolicy, Role, primary_caller
from r2act.actions.space import action_space
from r2act.errors import DataError
from r2act.schema import (
    ActionSpace,
    IncreaseMemoryLimit,
    InvalidPlan,
    Operation,
    PlannedIncident,
    PlanPattern,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    Topology,
    format_mebibytes,
)
from r2act.schema.rules import ScopeKind

_ROUNDING = 32 * 2**20
"""Gold memory limits are rounded up to a multiple of 32Mi, the way an operator writes them."""


class IncidentLabels(BaseModel):
    """Everything recovery scoring needs about one incident, under one policy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    action_space: ActionSpace = Field(description="Admissible plans for this incident.")
    gold_plan: RecoveryPlan = Field(description="The canonical valid plan (for Exact Match).")
    valid_plans: list[PlanPattern] = Field(min_length=1, description="P+: valid plan patterns.")
    invalid_plans: list[InvalidPlan] = Field(
        min_length=2, description="P-: plausible invalid plans, each tagged with its mode."
    )
    policy: str = Field(description="Name and version of the policy, e.g. 'r2act-mechanics/3'.")


def label_incident(
    incident: PlannedIncident, topology: Topology, policy: RecoveryPolicy = DEFAULT_POLICY
) -> IncidentLabels:
    """The recovery labels of ``incident`` on ``topology`` under ``policy``.

    Raises DataError when the incident's parameters cannot be labelled (unknown service,
    a route the topology does not have, a DNS fault on a service without a caller)."""
    space = action_space(incident, topology, policy)
    rules = policy.rules_on(incident.fault.type, incident.service, topology)
    labelled = [_plan_for(rule, incident, topology, space, policy) for rule in rules]
    valid = [pattern for _, pattern in labelled]
    return IncidentLabels(
        action_space=space,
        gold_plan=labelled[0][0],
        valid_plans=valid,
        invalid_plans=invalid_plans(incident, topology, space, valid, policy),
        policy=str(policy),
    )


def rule_targets(
    rule: PlanRule,
    service: str,
    topology: Topology,
    space: ActionSpace,
    incident_caller: str | None = None,
) -> list[str]:
    """The deployments a rule's plan may act on, canonical one first (``incident_caller``:
    the caller a DNS fault broke, for the ADDRESS_HOLDER role)."""
    if rule.role == Role.SERVICE:
        return [service]
    if rule.role == Role.PRIMARY_CALLER:
        return [primary_caller(service, topology)]
    if rule.role == Role.ADDRESS_HOLDER:
        return [address_holder(incident_caller, service, topology)]
    callers = sorted(c for c in topology.callers(service) if c in space.targets)
    return [service, *callers]


def _plan_for(
    rule: PlanRule,
    incident: PlannedIncident,
    topology: Topology,
    space: ActionSpace,
    policy: RecoveryPolicy,
) -> tuple[RecoveryPlan, PlanPattern]:
    """The canonical plan of ``rule`` for ``incident`` and the pattern of its equivalents."""
    service = incident.service
    targets = rule_targets(rule, service, topology, space, broken_caller(incident))
    target, operation = targets[0], rule.operation
    if target not in space.targets:
        raise DataError(
            f"incident {incident.id}: policy {policy} acts on {target}, which is not a target "
            f"of the action space (label a service whose caller is a deployment under test)"
        )
    if operation == Operation.RESTART_SERVICE:
        plan: RecoveryPlan = RestartService(operation="restart_service", target=target)
        return plan, PlanPattern(operation=operation, targets=targets)
    if operation == Operation.ROLLBACK_DEPLOYMENT:
        plan = RollbackDeployment(operation="rollback_deployment", target=target)
        return plan, PlanPattern(operation=operation, targets=targets)
    if operation == Operation.SCALE_OUT:
        lowest = topology.deployment(target).replicas + 1
        if rule.above_stressors:
            lowest = max(lowest, stress_workers(incident) + 1)
        if lowest > space.max_replicas:
            raise DataError(
                f"incident {incident.id}: {target} already runs {lowest - 1} replicas, the "
                f"policy maximum (raise max_replicas in the policy)"
            )
        plan = ScaleOut(operation="scale_out", target=target, replicas=lowest)
        return plan, PlanPattern(
            operation=operation,
            targets=targets,
            min_replicas=lowest,
            max_replicas=space.max_replicas,
        )
    if operation == Operation.INCREASE_MEMORY_LIMIT:
        bounds = policy.memory_bounds(topology.deployment(target))
        gold = -(-bounds.lowest // _ROUNDING) * _ROUNDING  # the lowest, up to a 32Mi step
        plan = IncreaseMemoryLimit(
            operation="increase_memory_limit",
            target=target,
            memory_limit=format_mebibytes(min(gold, bounds.highest)),
        )
        return plan, PlanPattern(
            operation=operation,
            targets=targets,
            min_memory_limit=format_mebibytes(bounds.lowest),
            max_memory_limit=format_mebibytes(bounds.highest),
        )
    if operation == Operation.ROLLBACK_CONFIG:
        flag = rule.scope == ScopeKind.FLAG
        scope = injected_flag(incident) if flag else injected_scope(incident)
        if scope not in space.scopes.get(target, []):
            what = "flag" if flag else "route"
            raise DataError(
                f"incident {incident.id}: {what} {scope!r} is not a {what} of {target} "
                f"(use one of: {space.scopes.get(target, [])})"
            )
        plan = RollbackConfig(operation="rollback_config", target=target, scope=scope)
        return plan, PlanPattern(operation=operation, targets=targets, scope=scope)
    if operation == Operation.REPAIR_DEPENDENCY:
        endpoint = broken_endpoint(incident, topology)
        plan = RepairDependency(operation="repair_dependency", target=target, dependency=endpoint)
        return plan, PlanPattern(operation=operation, targets=targets, dependency=endpoint)
    raise DataError(  # pragma: no cover - a policy listing no_action as a recovery
        f"incident {incident.id}: policy {policy} lists {operation}, which recovers nothing"
    )
