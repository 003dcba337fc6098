"""Recovery semantics: operation catalogue, policy, action spaces, plan sets, validity, mapper.

Pure functions over typed models; the policy is a named, versioned object. Start with
``label_incident`` (labels of one incident), ``is_valid`` (score one plan against them)
and ``map_rca`` (the policy's plan for a diagnosed service and fault type). Policies are
looked up by name with ``policy_named``; ``DEFAULT_POLICY`` is ``r2act-mechanics/3``."""

from r2act.actions.catalog import (
    OPERATION_CATALOG,
    FieldDomain,
    OperationSpec,
    describe_operations,
)
from r2act.actions.mapper import map_rca
from r2act.actions.plans import IncidentLabels, label_incident
from r2act.actions.policy import (
    DEFAULT_POLICY,
    MECHANICS_POLICY,
    PAPER_POLICY,
    POLICIES,
    PlanRule,
    RecoveryPolicy,
    Role,
    policy_named,
    primary_caller,
    primary_callers,
)
from r2act.actions.space import action_space, system_action_space
from r2act.actions.validity import PlanSets, in_action_space, is_valid

__all__ = [
    "DEFAULT_POLICY",
    "MECHANICS_POLICY",
    "OPERATION_CATALOG",
    "PAPER_POLICY",
    "POLICIES",
    "FieldDomain",
    "IncidentLabels",
    "OperationSpec",
    "PlanRule",
    "PlanSets",
    "RecoveryPolicy",
    "Role",
    "action_space",
    "describe_operations",
    "in_action_space",
    "is_valid",
    "label_incident",
    "map_rca",
    "policy_named",
    "primary_caller",
    "primary_callers",
    "system_action_space",
]
