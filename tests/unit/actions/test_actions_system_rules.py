"""A system's recovery-policy rules come from its own package, and the engine applies them.

Issue 20 item 1: which plans recover which fault is part of what a system declares
(``System.recovery_rules``); ``r2act.actions`` turns those rules into labels and mapper
plans. A toy system with rules of its own is labelled by them, a system without rules is
refused by a policy that reads them (and labelled by one that carries its own), and Online
Boutique's labels come from ``systems/onlineboutique/policy.py``.
"""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest
from action_incidents import make_incident

from r2act.actions import DEFAULT_POLICY, PAPER_POLICY, is_valid, label_incident, map_rca
from r2act.actions.policy import MECHANICS_V2_POLICY
from r2act.actions.space import action_space
from r2act.errors import DataError
from r2act.schema import FaultType, Operation, RollbackDeployment, ScaleOut
from r2act.schema.rules import PlanRule
from r2act.systems import INSTALLED, ONLINE_BOUTIQUE, get_system
from r2act.systems.base import System
from r2act.systems.policy import RecoveryRules

TOY = ONLINE_BOUTIQUE.model_copy(update={"system": "toyshop"})
"""A second system: Online Boutique's deployments under another name, so only the rules
differ."""


def _toy(rules: RecoveryRules | None) -> System:
    return dataclasses.replace(
        get_system(ONLINE_BOUTIQUE.system), name="toyshop", topology=TOY, recovery_rules=rules
    )


TOY_RULES = RecoveryRules(
    tables=MappingProxyType(
        {
            str(DEFAULT_POLICY): MappingProxyType(
                {
                    FaultType.POD_FAILURE: (PlanRule(Operation.ROLLBACK_DEPLOYMENT),),
                    FaultType.CPU_SATURATION: (PlanRule(Operation.SCALE_OUT),),
                }
            )
        }
    ),
    evidence="toy: no evidence",
)


def test_a_toy_systems_own_rules_give_its_labels_and_its_mapper_plans(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(INSTALLED, "toyshop", _toy(TOY_RULES))
    pod = make_incident("cartservice", FaultType.POD_FAILURE, topology=TOY)
    labels = label_incident(pod, TOY)
    assert labels.gold_plan == RollbackDeployment(
        operation="rollback_deployment", target="cartservice"
    )
    assert [p.operation for p in labels.valid_plans] == [Operation.ROLLBACK_DEPLOYMENT]
    # Online Boutique's gold for the same cell is a restart: its rules, not the toy's
    ob = label_incident(make_incident("cartservice", FaultType.POD_FAILURE), ONLINE_BOUTIQUE)
    assert ob.gold_plan.operation == Operation.RESTART_SERVICE
    # the toy says a scale-out recovers CPU on a backend (its clients do not pin)
    cpu = make_incident("cartservice", FaultType.CPU_SATURATION, topology=TOY)
    scale = ScaleOut(operation="scale_out", target="cartservice", replicas=2)
    assert is_valid(scale, label_incident(cpu, TOY))
    assert map_rca("cartservice", FaultType.CPU_SATURATION, action_space(cpu, TOY), TOY) == scale
    # a fault type its rules do not cover is refused, not labelled with another system's
    memory = make_incident("cartservice", FaultType.MEMORY_PRESSURE, topology=TOY)
    with pytest.raises(DataError, match=r"toyshop.*recovers memory_pressure"):
        label_incident(memory, TOY)


def test_a_system_without_rules_needs_a_policy_that_carries_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(INSTALLED, "toyshop", _toy(None))
    pod = make_incident("cartservice", FaultType.POD_FAILURE, topology=TOY)
    with pytest.raises(DataError, match=r"'toyshop' supplies no recovery rules.*paper-table-ii"):
        label_incident(pod, TOY)
    paper = label_incident(pod, TOY, PAPER_POLICY)
    assert paper.gold_plan.operation == Operation.RESTART_SERVICE
    # a system that supplies version 3 only cannot be labelled under version 2
    monkeypatch.setitem(INSTALLED, "toyshop", _toy(TOY_RULES))
    with pytest.raises(DataError, match="r2act-mechanics/2: system 'toyshop' supplies no"):
        label_incident(pod, TOY, MECHANICS_V2_POLICY)


def test_online_boutiques_labels_come_from_its_package() -> None:
    rules = get_system(ONLINE_BOUTIQUE.system).recovery_rules
    assert rules is not None and "docs/faults.md" in rules.evidence
    for policy in (DEFAULT_POLICY, MECHANICS_V2_POLICY):
        assert policy.rules is None  # the policy defers to the system
        assert policy.table(ONLINE_BOUTIQUE) is rules.table(str(policy))
    assert PAPER_POLICY.table(ONLINE_BOUTIQUE) is PAPER_POLICY.rules
