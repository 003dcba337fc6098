"""Records of the smoke campaign, built from the planner and the default policy.

Replay needs only records (labels, action space, fault) and a cluster, so these tests build
records straight from the plan instead of running a collection first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from replay_support import record_of

from r2act.campaigns import load_manifest, plan_incidents
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import BenchmarkRecord

REPO = Path(__file__).resolve().parents[3]


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
