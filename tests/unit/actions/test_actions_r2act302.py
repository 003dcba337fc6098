"""Over the paper-scale design: labels are consistent under both policies; the mapper's VC.

Runs only when the campaigns package can plan a manifest (it is written concurrently);
otherwise it skips with the reason.
"""

from __future__ import annotations

import importlib
from collections import Counter
from pathlib import Path

import pytest

from r2act.actions import POLICIES, is_valid, label_incident, map_rca
from r2act.schema import PlannedIncident, PlanPattern
from r2act.systems import ONLINE_BOUTIQUE


def _plan_302(repo_root: Path) -> list[PlannedIncident]:
    try:
        campaigns = importlib.import_module("r2act.campaigns")
        load_manifest = campaigns.load_manifest
        plan_incidents = campaigns.plan_incidents
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"r2act.campaigns.plan_incidents is not importable yet: {exc}")
    manifest = repo_root / "campaigns" / "r2act-302.yaml"
    if not manifest.exists():
        pytest.skip(f"{manifest} does not exist yet")
    incidents: list[PlannedIncident] = plan_incidents(load_manifest(manifest))
    return incidents


def _extremes(pattern: PlanPattern) -> list[dict[str, object]]:
    """Every admissible target, and the bounds of numeric fields: P+ representatives."""
    updates: list[dict[str, object]] = [{"target": t} for t in pattern.targets]
    if pattern.max_replicas is not None:
        updates += [{"replicas": pattern.min_replicas}, {"replicas": pattern.max_replicas}]
    if pattern.max_memory_limit is not None:
        updates += [
            {"memory_limit": pattern.min_memory_limit},
            {"memory_limit": pattern.max_memory_limit},
        ]
    return updates


def test_r2act_302_labels_are_consistent_and_the_mapper_follows_the_policy(
    repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    incidents = [i for i in _plan_302(repo_root) if not (i.quota and i.repetition > i.quota)]
    assert len(incidents) == 302
    shares = {}
    for policy in POLICIES.values():
        mapped_valid: Counter[str] = Counter()
        for incident in incidents:
            labels = label_incident(incident, ONLINE_BOUTIQUE, policy)
            assert is_valid(labels.gold_plan, labels), incident.id
            assert len(labels.invalid_plans) == 2
            for pattern in labels.valid_plans:
                for update in _extremes(pattern):
                    representative = labels.gold_plan.model_copy(update=update)
                    if representative.operation != pattern.operation.value:
                        continue
                    assert pattern.matches(representative), (incident.id, update)
                    assert is_valid(representative, labels), (incident.id, update)
            for negative in labels.invalid_plans:
                assert not is_valid(negative.plan, labels), (incident.id, negative)
            plan = map_rca(
                incident.service, incident.fault.type, labels.action_space, ONLINE_BOUTIQUE, policy
            )
            mapped_valid[incident.fault.type] += is_valid(plan, labels)
        shares[str(policy)] = sum(mapped_valid.values()) / len(incidents)
    with capsys.disabled():
        print(f"\ngold RCA + mapper VC on r2act-302: {shares} (paper: 0.599)")
    # under version 3 the pair fixes every plan but the DNS repair point: the mapper repairs
    # the primary caller (the frontend), right only where the drawn caller is the frontend.
    # Memory stays valid: a 32Mi step above the shipped limit clears every working set.
    # Version 2 labelled the primary caller whoever held the value, so its mapper is exact.
    # Table II's only HTTP plan names the route, which the pair cannot tell: the mapper's
    # guess (the most trafficked route) is right for the 15 of 87 HTTP incidents on it
    elsewhere = sum(
        1
        for i in incidents
        if i.fault.type.value.startswith("dns_")
        and i.fault.parameters["caller"] != ONLINE_BOUTIQUE.primary_caller(i.service)
    )
    assert 0 < elsewhere < 96
    assert shares == {
        "r2act-mechanics/3": (302 - elsewhere) / 302,
        "r2act-mechanics/2": 1.0,
        "paper-table-ii/1": (302 - 87 + 15) / 302,
    }
