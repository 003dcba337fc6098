"""Records of the smoke campaign, built from the planner and the default policy.

Replay needs only records (labels, action space, fault) and a cluster, so these tests build
records straight from the plan instead of running a collection first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from r2act.actions import label_incident
from r2act.campaigns import load_manifest, plan_incidents
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import (
    BenchmarkRecord,
    ObservationRefs,
    PlannedIncident,
    RcaLabel,
    RecordMetadata,
)
from r2act.systems import ONLINE_BOUTIQUE

REPO = Path(__file__).resolve().parents[3]


def record_of(incident: PlannedIncident) -> BenchmarkRecord:
    """A benchmark record for a planned incident, labelled by the default policy."""
    labels = label_incident(incident, ONLINE_BOUTIQUE)
    return BenchmarkRecord(
        incident_id=incident.id,
        metadata=RecordMetadata(
            campaign=incident.campaign,
            system=incident.system,
            repetition=incident.repetition,
            target_kind="sim",
            seed=incident.seed,
            tool_version="test",
            manifest_sha256="0" * 64,
            collected_at="2026-01-01T00:00:00Z",
        ),
        fault=incident.fault,
        observations=ObservationRefs(
            phases=["pre", "during", "post"],
            log_records=1,
            event_records=1,
            metric_samples=1,
            services_logging=["frontend"],
        ),
        labels=RcaLabel(
            service=incident.service,
            fault_type=incident.fault.type,
            intensity=incident.fault.intensity,
            mechanism="test",
        ),
        action_space=labels.action_space,
        gold_plan=labels.gold_plan,
        valid_plans=labels.valid_plans,
        invalid_plans=labels.invalid_plans,
        policy=labels.policy,
    )


@pytest.fixture(scope="session")
def smoke_records() -> list[BenchmarkRecord]:
    """One record per incident of campaigns/smoke.yaml (every fault type at least once)."""
    manifest = load_manifest(REPO / "campaigns" / "smoke.yaml")
    return [record_of(i) for i in plan_incidents(manifest)]


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimulatedCluster]:
    """A fresh simulated cluster with no glitches."""
    from r2act.campaigns import GlitchRates

    yield SimulatedCluster(
        tmp_path,
        name="replay-test",
        seed=7,
        glitches=GlitchRates(
            injection_failure=0.0, metric_gap=0.0, slow_recovery=0.0, transient_api_error=0.0
        ),
    )
