"""Why a plan is invalid: one category by fixed precedence, plus where its target sits.

A single validity bit hides what to fix: a method that never acts, one that writes
malformed plans, one that picks the wrong operation and one that aims the right operation
at the wrong service need different remedies. Every invalid plan therefore gets exactly one
category, checked in this order (the first that applies wins):

1. ``no_op`` — no executable action: the prediction is missing, the plan is absent or
   ``null``, or it is ``no_action``.
2. ``invalid_structure`` — a plan was given but is not a well-formed plan for this incident:
   unparsable (unknown operation, missing, extra or mistyped fields) or outside the
   incident's action space (a target that is not an admissible deployment, a scope or
   dependency the target does not have, replicas or memory out of bounds).
3. ``wrong_operation`` — well formed and admissible, but no valid plan uses its operation.
4. ``wrong_target`` — the operation is right but the target, or a target-bound field
   (scope, dependency, replicas, memory limit), is not one a valid plan accepts; also a plan
   that matches P+ yet is listed in P- takes the category of its P- tag (``invalid_scope``
   counts as ``wrong_target``) with ``detail`` ``listed_invalid:<tag>``.

Independently of the category, a plan whose target is not among the valid targets is
*placed on the call graph* relative to the root-cause service (after RCAgentBench's
failure modes): ``upstream_caller`` (a transitive caller that merely saw the symptom),
``downstream_dependency`` (a transitive callee below the fault), ``unrelated_service``
(another branch) or ``hallucinated_service`` (not a deployment of the system). Placement
is kept orthogonal because a hallucinated target is by precedence an ``invalid_structure``
error (outside the action space), yet it is exactly the case the placement must show.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from r2act import actions
from r2act.evaluation.predictions import ParsedPrediction
from r2act.schema import (
    BenchmarkRecord,
    FailureMode,
    IncreaseMemoryLimit,
    NoAction,
    RecoveryPlan,
    RepairDependency,
    RollbackConfig,
    ScaleOut,
    Topology,
    plan_target,
)


class ErrorCategory(StrEnum):
    """Taxonomy of invalid plans, in precedence order."""

    NO_OP = "no_op"
    INVALID_STRUCTURE = "invalid_structure"
    WRONG_OPERATION = "wrong_operation"
    WRONG_TARGET = "wrong_target"


class Placement(StrEnum):
    """Where a wrong target sits relative to the root-cause service."""

    UPSTREAM_CALLER = "upstream_caller"
    DOWNSTREAM_DEPENDENCY = "downstream_dependency"
    UNRELATED_SERVICE = "unrelated_service"
    HALLUCINATED_SERVICE = "hallucinated_service"
    ROOT_CAUSE_SERVICE = "root_cause_service"
    """The root-cause service itself, when no valid plan targets it (rare by policy)."""


@dataclass(frozen=True)
class Classification:
    """The category of one invalid plan, a finer reason, and the wrong target's placement."""

    category: ErrorCategory
    detail: str
    placement: Placement | None = None


def place_target(target: str, root_cause: str, topology: Topology | None) -> Placement | None:
    """Position of ``target`` on the call graph relative to ``root_cause`` (None: no graph)."""
    if topology is None:
        return None
    if target not in topology.names:
        return Placement.HALLUCINATED_SERVICE
    if target == root_cause:
        return Placement.ROOT_CAUSE_SERVICE
    if target in topology.upstream(root_cause):
        return Placement.UPSTREAM_CALLER
    if target in topology.downstream(root_cause):
        return Placement.DOWNSTREAM_DEPENDENCY
    return Placement.UNRELATED_SERVICE


def classify(
    record: BenchmarkRecord, prediction: ParsedPrediction | None, topology: Topology | None
) -> Classification:
    """Categorise the plan of an incident already known to be invalid (see module doc)."""
    if prediction is None:
        return Classification(ErrorCategory.NO_OP, "missing_prediction")
    if prediction.plan_state in ("absent", "null"):
        return Classification(ErrorCategory.NO_OP, f"{prediction.plan_state}_plan")
    plan = prediction.plan
    if isinstance(plan, NoAction):
        return Classification(ErrorCategory.NO_OP, "no_action")
    placement = _placement(record, prediction.raw_target, topology)
    if plan is None:
        return Classification(ErrorCategory.INVALID_STRUCTURE, "unparsable", placement)
    if not actions.in_action_space(plan, record.action_space):
        return Classification(ErrorCategory.INVALID_STRUCTURE, "outside_action_space", placement)
    same_operation = [p for p in record.valid_plans if p.operation.value == plan.operation]
    if not same_operation:
        return Classification(ErrorCategory.WRONG_OPERATION, "wrong_operation", placement)
    target = plan_target(plan)
    if not any(not p.targets or target in p.targets for p in same_operation):
        return Classification(ErrorCategory.WRONG_TARGET, "wrong_target", placement)
    if any(p.matches(plan) for p in same_operation):
        listed = next((n.failure_mode for n in record.invalid_plans if n.plan == plan), None)
        category = ErrorCategory.WRONG_TARGET if listed is None else category_of_listed(listed)
        return Classification(category, f"listed_invalid:{listed}", placement)
    return Classification(ErrorCategory.WRONG_TARGET, _wrong_field(plan), placement)


def category_of_listed(mode: FailureMode) -> ErrorCategory:
    """The taxonomy category a P- failure mode belongs to (invalid_scope is a target error)."""
    if mode is FailureMode.INVALID_SCOPE:
        return ErrorCategory.WRONG_TARGET
    return ErrorCategory(mode.value)


def _placement(
    record: BenchmarkRecord, target: str | None, topology: Topology | None
) -> Placement | None:
    valid_targets = {t for p in record.valid_plans for t in p.targets}
    if target is None or target in valid_targets:
        return None
    return place_target(target, record.labels.service, topology)


def _wrong_field(plan: RecoveryPlan) -> str:
    if isinstance(plan, RollbackConfig):
        return "wrong_scope"
    if isinstance(plan, RepairDependency):
        return "wrong_dependency"
    if isinstance(plan, ScaleOut):
        return "wrong_replicas"
    if isinstance(plan, IncreaseMemoryLimit):
        return "wrong_memory_limit"
    return "wrong_field"
