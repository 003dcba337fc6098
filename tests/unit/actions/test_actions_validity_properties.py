"""Property tests for valid(p) = p matches P+ and p not in P- and p inside A."""

from __future__ import annotations

from action_incidents import ROOT_CAUSE_SERVICES, make_incident, realizable
from hypothesis import given, settings
from hypothesis import strategies as st

from r2act.actions import IncidentLabels, in_action_space, is_valid, label_incident
from r2act.schema import (
    PLAN_ADAPTER,
    FaultType,
    IncreaseMemoryLimit,
    Intensity,
    NoAction,
    Operation,
    PlanPattern,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    memory_bytes,
    plan_target,
)
from r2act.systems import ONLINE_BOUTIQUE, get_system

MI = 2**20
_NAMES = [*ONLINE_BOUTIQUE.names, "nosuchservice"]
_SCOPES = [r.scope for r in ONLINE_BOUTIQUE.routes] + ["GET /nowhere"]
_ENDPOINTS = [e for d in ONLINE_BOUTIQUE.deployments if (e := d.endpoint)] + ["ghost:1"]

_LABELS: dict[str, IncidentLabels] = {}


_OB_FAULTS = get_system("onlineboutique").fault_types
_CELLS = [(s, f) for s in ROOT_CAUSE_SERVICES for f in _OB_FAULTS if realizable(s, f)]


def _labels_of(cell: tuple[str, FaultType], intensity: Intensity, rep: int) -> IncidentLabels:
    service, fault_type = cell
    incident = make_incident(service, fault_type, intensity, rep)
    if incident.id not in _LABELS:
        _LABELS[incident.id] = label_incident(incident, ONLINE_BOUTIQUE)
    return _LABELS[incident.id]


labels_st = st.builds(
    _labels_of,
    st.sampled_from(_CELLS),
    st.sampled_from(list(Intensity)),
    st.integers(1, 6),
)

_target = st.sampled_from(_NAMES)
plans_st: st.SearchStrategy[RecoveryPlan] = st.one_of(
    st.builds(RestartService, operation=st.just("restart_service"), target=_target),
    st.builds(RollbackDeployment, operation=st.just("rollback_deployment"), target=_target),
    st.builds(
        ScaleOut, operation=st.just("scale_out"), target=_target, replicas=st.integers(1, 20)
    ),
    st.builds(
        IncreaseMemoryLimit,
        operation=st.just("increase_memory_limit"),
        target=_target,
        memory_limit=st.integers(1, 3000).map(lambda n: f"{n}Mi"),
    ),
    st.builds(
        RollbackConfig,
        operation=st.just("rollback_config"),
        target=_target,
        scope=st.sampled_from(_SCOPES),
    ),
    st.builds(
        RepairDependency,
        operation=st.just("repair_dependency"),
        target=_target,
        dependency=st.sampled_from(_ENDPOINTS),
    ),
    st.just(NoAction(operation="no_action")),
)


@st.composite
def plan_matching(draw: st.DrawFn, pattern: PlanPattern) -> RecoveryPlan:
    """Any plan a P+ pattern accepts: every admissible target and value within its bounds."""
    target = draw(st.sampled_from(pattern.targets))
    op = pattern.operation
    if op == Operation.SCALE_OUT:
        assert pattern.min_replicas is not None and pattern.max_replicas is not None
        replicas = draw(st.integers(pattern.min_replicas, pattern.max_replicas))
        return ScaleOut(operation="scale_out", target=target, replicas=replicas)
    if op == Operation.INCREASE_MEMORY_LIMIT:
        assert pattern.min_memory_limit and pattern.max_memory_limit
        low = -(-memory_bytes(pattern.min_memory_limit) // MI)
        mebibytes = draw(st.integers(low, memory_bytes(pattern.max_memory_limit) // MI))
        return IncreaseMemoryLimit(
            operation="increase_memory_limit", target=target, memory_limit=f"{mebibytes}Mi"
        )
    if op == Operation.ROLLBACK_CONFIG:
        assert pattern.scope is not None
        return RollbackConfig(operation="rollback_config", target=target, scope=pattern.scope)
    if op == Operation.REPAIR_DEPENDENCY:
        assert pattern.dependency is not None
        return RepairDependency(
            operation="repair_dependency", target=target, dependency=pattern.dependency
        )
    return PLAN_ADAPTER.validate_python({"operation": op.value, "target": target})


@settings(max_examples=300, deadline=None)
@given(labels=labels_st, plan=plans_st)
def test_a_plan_outside_the_action_space_is_never_valid(
    labels: IncidentLabels, plan: RecoveryPlan
) -> None:
    if not in_action_space(plan, labels.action_space):
        assert not is_valid(plan, labels)


@settings(max_examples=300, deadline=None)
@given(labels=labels_st, plan=plans_st)
def test_validity_is_p_plus_and_not_p_minus_and_inside_a(
    labels: IncidentLabels, plan: RecoveryPlan
) -> None:
    expected = (
        any(p.matches(plan) for p in labels.valid_plans)
        and plan not in [n.plan for n in labels.invalid_plans]
        and in_action_space(plan, labels.action_space)
    )
    assert is_valid(plan, labels) is expected


@settings(max_examples=300, deadline=None)
@given(data=st.data(), labels=labels_st)
def test_every_plan_equivalent_to_the_gold_plan_is_valid(
    data: st.DataObject, labels: IncidentLabels
) -> None:
    pattern = data.draw(st.sampled_from(labels.valid_plans))
    plan = data.draw(plan_matching(pattern))
    assert in_action_space(plan, labels.action_space)
    assert plan not in [n.plan for n in labels.invalid_plans]
    assert is_valid(plan, labels)


@settings(max_examples=100, deadline=None)
@given(labels=labels_st)
def test_no_action_is_never_valid(labels: IncidentLabels) -> None:
    assert not is_valid(NoAction(operation="no_action"), labels)


@settings(max_examples=300, deadline=None)
@given(labels=labels_st, plan=plans_st)
def test_validity_survives_a_json_round_trip(labels: IncidentLabels, plan: RecoveryPlan) -> None:
    again = PLAN_ADAPTER.validate_json(PLAN_ADAPTER.dump_json(plan))
    assert is_valid(again, labels) is is_valid(plan, labels)


@settings(max_examples=200, deadline=None)
@given(labels=labels_st, plan=plans_st)
def test_memory_limit_spelling_does_not_change_validity(
    labels: IncidentLabels, plan: RecoveryPlan
) -> None:
    if isinstance(plan, IncreaseMemoryLimit):
        kibibytes = memory_bytes(plan.memory_limit) // 1024
        respelt = plan.model_copy(update={"memory_limit": f"{kibibytes}Ki"})
        assert is_valid(respelt, labels) is is_valid(plan, labels)


@settings(max_examples=200, deadline=None)
@given(labels=labels_st, plan=plans_st)
def test_a_valid_plan_acts_on_the_root_cause_or_one_of_its_callers(
    labels: IncidentLabels, plan: RecoveryPlan
) -> None:
    if is_valid(plan, labels):
        gold_target = plan_target(labels.gold_plan)
        assert gold_target is not None
        target = plan_target(plan)
        assert target == gold_target or target in ONLINE_BOUTIQUE.callers(gold_target)
