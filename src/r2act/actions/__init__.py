"""Recovery semantics: operation catalogue, policy, action spaces, plan sets, validity, mapper.

Pure functions over typed models; the policy is a named, versioned object. Start with
``label_incident`` (labels of one incident), ``is_valid`` (score one plan against them)
and ``map_rca`` (the fixed mapper for RCA-only methods)."""

from r2act.actions.catalog import (
    OPERATION_CATALOG,
    FieldDomain,
    OperationSpec,
    describe_operations,
)
from r2act.actions.mapper import MAPPER_OPERATIONS, map_rca
from r2act.actions.plans import IncidentLabels, label_incident
from r2act.actions.policy import DEFAULT_POLICY, RecoveryPolicy, stress_bytes
from r2act.actions.space import action_space, system_action_space
from r2act.actions.validity import PlanSets, in_action_space, is_valid

__all__ = [
    "DEFAULT_POLICY",
    "MAPPER_OPERATIONS",
    "OPERATION_CATALOG",
    "FieldDomain",
    "IncidentLabels",
    "OperationSpec",
    "PlanSets",
    "RecoveryPolicy",
    "action_space",
    "describe_operations",
    "in_action_space",
    "is_valid",
    "label_incident",
    "map_rca",
    "stress_bytes",
    "system_action_space",
]
