"""Under r2act-mechanics/3, replaying on the simulator: gold plans recover, no_action never does,
and no invalid plan recovers (the findings left, docs/faults.md, are plans no list names).

The sample is one incident per (fault type, intensity) of r2act-302's main population (the
frontend comes first in its service order, so its cells stand for pod, CPU, memory, delay
and HTTP faults), plus the smoke campaign's HTTP incidents, plus one DNS incident per
(service, caller holding the address) pair and every memory intensity of the paper-scale
plan's cells, so each drawn caller and the working-set bound are replayed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_support import record_of

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.quotas import is_spare
from r2act.cluster.sim import SimulatedCluster
from r2act.replay import ReplayRequest, ReplaySettings, replay_one
from r2act.schema import BenchmarkRecord, NoAction, PlannedIncident, ScaleOut
from r2act.systems import get_system

REPO = Path(__file__).resolve().parents[3]
SETTINGS = ReplaySettings()


def _sample() -> list[PlannedIncident]:
    design = load_manifest(REPO / "campaigns" / "r2act-302.yaml")
    first: dict[tuple[str, str], PlannedIncident] = {}
    for incident in plan_incidents(design):
        if not is_spare(incident):
            first.setdefault((incident.fault.type.value, incident.fault.intensity.value), incident)
    for incident in plan_incidents(design):
        if is_spare(incident):
            continue
        if incident.fault.type.value.startswith("dns_"):
            key = (incident.service, str(incident.fault.parameters["caller"]))
            first.setdefault(key, incident)
        if incident.fault.type.value == "memory_pressure":
            first.setdefault((incident.service, incident.fault.intensity.value), incident)
    smoke = plan_incidents(load_manifest(REPO / "campaigns" / "smoke.yaml"))
    return [*first.values(), *(i for i in smoke if i.fault.type.value.startswith("http_"))]


SAMPLE = _sample()


@pytest.mark.parametrize("incident", SAMPLE, ids=lambda i: i.id)
def test_gold_recovers_no_action_does_not_and_invalid_plans_only_as_listed(
    incident: PlannedIncident, sim: SimulatedCluster
) -> None:
    record: BenchmarkRecord = record_of(incident)
    assert record.policy == "r2act-mechanics/3"
    if incident.fault.parameters.get("caller") == "recommendationservice":
        # the frontend tolerates failing recommendations (docs/faults.md): users see
        # nothing, so replay finds the fault harmless and judges no plan by recovery
        for plan in (record.gold_plan, NoAction(operation="no_action")):
            outcome = replay_one(sim, record, ReplayRequest(plan=plan), SETTINGS)
            assert outcome.status == "no_effect", (outcome.status, outcome.reason)
        return
    gold = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
    assert gold.status == "executed" and gold.recovered, (gold.status, gold.reason)
    idle = replay_one(sim, record, ReplayRequest(plan=NoAction(operation="no_action")), SETTINGS)
    assert idle.status == "executed" and not idle.recovered, (idle.status, idle.reason)
    for negative in record.invalid_plans:
        outcome = replay_one(sim, record, ReplayRequest(plan=negative.plan), SETTINGS)
        assert outcome.status == "executed", (negative, outcome.reason)
        assert not outcome.recovered, (negative.plan, outcome.reason)
    assert sim.leftovers() == []


def test_the_sample_covers_every_caller_holding_a_dns_address() -> None:
    pairs = {
        (i.service, i.fault.parameters["caller"])
        for i in SAMPLE
        if i.fault.type.value.startswith("dns_")
    }
    assert pairs == {
        ("cartservice", "frontend"),
        ("cartservice", "checkoutservice"),
        ("productcatalogservice", "frontend"),
        ("productcatalogservice", "checkoutservice"),
        ("productcatalogservice", "recommendationservice"),
    }


def test_the_sample_covers_every_fault_type() -> None:
    assert {i.fault.type for i in SAMPLE} == set(get_system("onlineboutique").fault_types)


def _frontend(fault: str, intensity: str) -> PlannedIncident:
    return next(
        i
        for i in SAMPLE
        if (i.service, i.fault.type.value, i.fault.intensity.value)
        == ("frontend", fault, intensity)
    )


@pytest.mark.parametrize(
    ("fault", "intensity", "recovering"),
    [
        # users' requests spread over the ready pods: the stressed pod's share falls below
        # the 1/(workers + 1) of its CPU the stressor leaves it (valid: the policy's pattern)
        ("cpu_saturation", "moderate", {2, 3, 10}),
        ("cpu_saturation", "severe", {3, 10}),
        # the failed pod stays in the Deployment, not ready; a delayed pod keeps 1/N of
        # the requests, each of them slow
        ("pod_failure", "severe", set()),
        ("network_delay", "severe", set()),
        # a finding, not a label: 1/N of the route's requests still fail, but the oracle
        # averages its probes over six routes, so from N = 4 the share drops under 5%
        ("http_error", "severe", {10}),
    ],
)
def test_scale_out_of_the_frontend_recovers_exactly_what_the_policy_and_findings_say(
    fault: str, intensity: str, recovering: set[int], sim: SimulatedCluster
) -> None:
    incident = _frontend(fault, intensity)
    record = record_of(incident)
    recovered = set()
    for replicas in (2, 3, 10):
        plan = ScaleOut(operation="scale_out", target="frontend", replicas=replicas)
        outcome = replay_one(sim, record, ReplayRequest(plan=plan), SETTINGS)
        assert outcome.status == "executed", outcome.reason
        if outcome.recovered:
            recovered.add(replicas)
        valid = any(p.matches(plan) for p in record.valid_plans)
        assert valid is (outcome.recovered and not fault.startswith("http_")), replicas
    assert recovered == recovering
