"""A feature-flag incident is recovered by reverting that flag on its reader, nothing else;
the mapper, knowing only (service, feature_flag), must guess the flag and misses some."""

from __future__ import annotations

import pytest

from r2act.actions import (
    DEFAULT_POLICY,
    PAPER_POLICY,
    RecoveryPolicy,
    is_valid,
    label_incident,
    map_rca,
)
from r2act.actions.policy import MECHANICS_V2_POLICY
from r2act.actions.space import system_action_space
from r2act.schema import (
    FailureMode,
    FaultSpec,
    FaultType,
    Intensity,
    PhaseDurations,
    PlannedIncident,
    RestartService,
    RollbackConfig,
    incident_id,
)
from r2act.systems import ONLINE_BOUTIQUE, System


def _incident(shop: System, key: str, intensity: Intensity = Intensity.SEVERE) -> PlannedIncident:
    flag = shop.flags[key]
    ident = incident_id(shop.name, flag.service, FaultType.FEATURE_FLAG, intensity, 1)
    return PlannedIncident(
        id=ident,
        campaign="flags",
        system=shop.name,
        service=flag.service,
        fault=FaultSpec(
            type=FaultType.FEATURE_FLAG,
            intensity=intensity,
            service=flag.service,
            duration_s=60,
            parameters={"flag": key, "variant": flag.variant(intensity).name},
        ),
        repetition=1,
        phases=PhaseDurations(pre_s=10, during_s=60, post_s=10, recovery_timeout_s=60),
        seed=1,
    )


def _realizable(shop: System) -> list[str]:
    return [k for k, f in shop.flags.items() if f.realizable]


POLICIES = [DEFAULT_POLICY, MECHANICS_V2_POLICY, PAPER_POLICY]


def test_the_action_space_lists_each_targets_routes_then_the_flags_it_reads(
    flag_shop: System,
) -> None:
    space = system_action_space(flag_shop.topology)
    routes = [r.scope for r in flag_shop.topology.routes_of("ad")]
    assert space.scopes["ad"] == [*routes, "adManualGc", "adHighCpu", "adFailure"]
    assert space.scopes["checkout"][-2:] == ["kafkaQueueProblems", "paymentUnreachable"]
    for target, scopes in space.scopes.items():
        for key in (s for s in scopes if " " not in s):
            assert target in flag_shop.flags[key].readers


def test_online_boutiques_action_space_has_no_flag_scopes() -> None:
    space = system_action_space(ONLINE_BOUTIQUE)
    assert all(" /" in scope for scopes in space.scopes.values() for scope in scopes)


@pytest.mark.parametrize("policy", POLICIES, ids=str)
def test_the_gold_plan_reverts_that_flag_on_its_service(
    flag_shop: System, policy: RecoveryPolicy
) -> None:
    for key in _realizable(flag_shop):
        incident = _incident(flag_shop, key)
        labels = label_incident(incident, flag_shop.topology, policy)
        gold = RollbackConfig(operation="rollback_config", target=incident.service, scope=key)
        assert labels.gold_plan == gold
        assert is_valid(gold, labels)


def test_restarting_the_service_or_reverting_another_of_its_flags_is_invalid(
    flag_shop: System,
) -> None:
    for key in _realizable(flag_shop):
        incident = _incident(flag_shop, key)
        labels = label_incident(incident, flag_shop.topology)
        service = incident.service
        assert not is_valid(RestartService(operation="restart_service", target=service), labels)
        for other in flag_shop.flags_read_by(service):
            plan = RollbackConfig(operation="rollback_config", target=service, scope=other)
            assert is_valid(plan, labels) == (other == key), (key, other)
        modes = [p.failure_mode for p in labels.invalid_plans]
        restart = RestartService(operation="restart_service", target=service)
        assert restart in [p.plan for p in labels.invalid_plans]
        if len(flag_shop.flags_read_by(service)) > 1:  # the near miss comes first
            assert modes[0] == FailureMode.INVALID_SCOPE
            near = labels.invalid_plans[0].plan
            assert isinstance(near, RollbackConfig) and near.scope != key


def test_the_other_flag_near_miss_is_the_first_other_flag_the_service_reads(
    flag_shop: System,
) -> None:
    labels = label_incident(_incident(flag_shop, "adManualGc"), flag_shop.topology)
    assert labels.invalid_plans[0].plan == RollbackConfig(
        operation="rollback_config", target="ad", scope="adHighCpu"
    )
    labels = label_incident(_incident(flag_shop, "adHighCpu"), flag_shop.topology)
    assert labels.invalid_plans[0].plan == RollbackConfig(
        operation="rollback_config", target="ad", scope="adManualGc"
    )


def test_the_mapper_takes_the_first_realizable_flag_so_its_vc_is_below_one_on_ad(
    flag_shop: System,
) -> None:
    valid = {}
    for key in _realizable(flag_shop):
        incident = _incident(flag_shop, key)
        labels = label_incident(incident, flag_shop.topology)
        plan = map_rca(
            incident.service, FaultType.FEATURE_FLAG, labels.action_space, flag_shop.topology
        )
        assert isinstance(plan, RollbackConfig) and plan.target == incident.service
        assert plan.scope == flag_shop.realizable_flags(incident.service)[0].key
        valid[key] = is_valid(plan, labels)
    ad = [valid[k] for k in ("adManualGc", "adHighCpu", "adFailure")]
    assert ad == [True, False, False]
    single = [k for k in valid if len(flag_shop.realizable_flags(flag_shop.flags[k].service)) == 1]
    assert single and all(valid[k] for k in single)
    assert (sum(valid.values()), len(valid)) == (8, 10)  # VC 0.8 over the flags taken once


def test_the_mapper_never_reads_the_incidents_flag(flag_shop: System) -> None:
    """Two incidents that differ only in the flag get the same mapped plan."""
    spaces = [
        label_incident(_incident(flag_shop, k), flag_shop.topology).action_space
        for k in ("adFailure", "adHighCpu")
    ]
    plans = [map_rca("ad", FaultType.FEATURE_FLAG, s, flag_shop.topology) for s in spaces]
    assert plans[0] == plans[1]


def test_a_flag_diagnosis_on_a_system_without_flags_maps_to_no_action() -> None:
    space = system_action_space(ONLINE_BOUTIQUE)
    for policy in (DEFAULT_POLICY, MECHANICS_V2_POLICY):
        plan = map_rca("cartservice", FaultType.FEATURE_FLAG, space, ONLINE_BOUTIQUE, policy)
        assert plan.operation == "no_action"
