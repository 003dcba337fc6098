"""Recovery validity: valid(p) = p matches P+ and p is not in P- and p lies inside A.

All three conditions are checked, not just P+: P+ patterns carry bounds that an
ill-formed label could leave wider than the action space, and P- may deliberately list a
plan a pattern would accept. A missing plan (``None``, e.g. an unparsable prediction) is
never valid.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from r2act.schema import ActionSpace, InvalidPlan, PlanPattern, RecoveryPlan


class PlanSets(Protocol):
    """Anything carrying an action space and P+/P- (IncidentLabels, BenchmarkRecord)."""

    @property
    def action_space(self) -> ActionSpace: ...

    @property
    def valid_plans(self) -> Sequence[PlanPattern]: ...

    @property
    def invalid_plans(self) -> Sequence[InvalidPlan]: ...


def in_action_space(plan: RecoveryPlan, space: ActionSpace) -> bool:
    """True when every part of ``plan`` is admissible in ``space``.

    A memory limit on a target without a recorded current limit, or a quantity the space
    cannot compare, is outside rather than an error: untrusted plans must never crash scoring.
    """
    try:
        return space.contains(plan)
    except (KeyError, ValueError):
        return False


def is_valid(plan: RecoveryPlan | None, labels: PlanSets) -> bool:
    """True when ``plan`` recovers the incident: in P+, not in P-, inside the action space."""
    if plan is None:
        return False
    if not any(pattern.matches(plan) for pattern in labels.valid_plans):
        return False
    if any(listed.plan == plan for listed in labels.invalid_plans):
        return False
    return in_action_space(plan, labels.action_space)
