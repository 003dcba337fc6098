"""Recovery labels of one incident: action space, gold plan, P+ patterns and P- plans.

``label_incident`` is the single entry point. The gold plan is the canonical valid plan
(what Exact Match compares against); P+ widens it to every equivalent plan (replica counts
and memory limits as bounds, every DNS repair point), so scoring never depends on a
surface form; P- lists plausible mistakes (see ``r2act.actions.negatives``).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from r2act.actions.injected import broken_endpoint, injected_scope
from r2act.actions.negatives import invalid_plans
from r2act.actions.policy import DEFAULT_POLICY, RecoveryPolicy
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
    policy: str = Field(description="Name and version of the policy, e.g. 'r2act-default/1'.")


@dataclass(frozen=True)
class _Label:
    gold: RecoveryPlan
    pattern: PlanPattern


def label_incident(
    incident: PlannedIncident, topology: Topology, policy: RecoveryPolicy = DEFAULT_POLICY
) -> IncidentLabels:
    """The recovery labels of ``incident`` on ``topology`` under ``policy``.

    Raises DataError when the incident's parameters cannot be labelled (unknown service,
    a route or size the topology does not have)."""
    space = action_space(incident, topology, policy)
    label = _gold_and_pattern(incident, topology, space, policy)
    return IncidentLabels(
        action_space=space,
        gold_plan=label.gold,
        valid_plans=[label.pattern],
        invalid_plans=invalid_plans(incident, topology, space, label.pattern),
        policy=str(policy),
    )


def _gold_and_pattern(
    incident: PlannedIncident, topology: Topology, space: ActionSpace, policy: RecoveryPolicy
) -> _Label:
    service = incident.service
    deployment = topology.deployment(service)
    operation = policy.operation_for(incident.fault, deployment)
    if operation == Operation.RESTART_SERVICE:
        return _Label(
            RestartService(operation="restart_service", target=service),
            PlanPattern(operation=operation, targets=[service]),
        )
    if operation == Operation.ROLLBACK_DEPLOYMENT:
        return _Label(
            RollbackDeployment(operation="rollback_deployment", target=service),
            PlanPattern(operation=operation, targets=[service]),
        )
    if operation == Operation.SCALE_OUT:
        lowest = deployment.replicas + 1
        if lowest > space.max_replicas:
            raise DataError(
                f"incident {incident.id}: {service} already runs {deployment.replicas} "
                f"replicas, the policy maximum (raise max_replicas in the policy)"
            )
        return _Label(
            ScaleOut(operation="scale_out", target=service, replicas=lowest),
            PlanPattern(
                operation=operation,
                targets=[service],
                min_replicas=lowest,
                max_replicas=space.max_replicas,
            ),
        )
    if operation == Operation.INCREASE_MEMORY_LIMIT:
        bounds = policy.memory_bounds(incident.fault, deployment)
        rounded = -(-bounds.lowest // _ROUNDING) * _ROUNDING
        chosen = rounded if rounded <= bounds.highest else bounds.lowest
        return _Label(
            IncreaseMemoryLimit(
                operation="increase_memory_limit",
                target=service,
                memory_limit=format_mebibytes(chosen),
            ),
            PlanPattern(
                operation=operation,
                targets=[service],
                min_memory_limit=format_mebibytes(bounds.lowest),
                max_memory_limit=f"{bounds.highest // 2**20}Mi",
            ),
        )
    if operation == Operation.ROLLBACK_CONFIG:
        scope = injected_scope(incident)
        if scope not in space.scopes.get(service, []):
            raise DataError(
                f"incident {incident.id}: route {scope!r} does not reach {service} "
                f"(use one of its routes: {space.scopes.get(service, [])})"
            )
        return _Label(
            RollbackConfig(operation="rollback_config", target=service, scope=scope),
            PlanPattern(operation=operation, targets=[service], scope=scope),
        )
    if operation == Operation.REPAIR_DEPENDENCY:
        endpoint = broken_endpoint(incident, topology)
        repair_points = [service] + [
            caller for caller in topology.callers(service) if caller in space.targets
        ]
        return _Label(
            RepairDependency(operation="repair_dependency", target=service, dependency=endpoint),
            PlanPattern(operation=operation, targets=repair_points, dependency=endpoint),
        )
    raise DataError(  # pragma: no cover - a policy mapping a fault to no_action
        f"incident {incident.id}: policy {policy} maps it to {operation}, which recovers nothing"
    )
