"""End to end on a real kind cluster made by deploy/kind/up.sh (opt-in: --with-e2e).

Collects the kind demo campaign (by default its first two incidents, about ten minutes;
R2ACT_E2E_ALL=1 runs all five) through the real adapter: Chaos Mesh injects, the
collector snapshots logs, events, state and Prometheus metrics, and nothing is left over.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from r2act.collector.campaign import collect, plan_collection

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "campaigns" / "kind-demo.yaml"


def _require_cluster(context: str) -> None:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not installed; see deploy/README.md")
    found = subprocess.run(
        ["kubectl", "config", "get-contexts", "-o", "name"],
        capture_output=True,
        text=True,
        check=False,
    )
    if context not in found.stdout.split():
        pytest.fail(f"no kubeconfig context {context}; create the cluster with deploy/kind/up.sh")


def test_kind_demo_campaign_collects_completely_on_kind(tmp_path: Path) -> None:
    plan = plan_collection(DEMO)
    _require_cluster(plan.manifest.target.context)  # type: ignore[union-attr]
    if not os.environ.get("R2ACT_E2E_ALL"):
        plan = plan_collection(DEMO, only=[item.incident.id for item in plan.items[:2]])

    summary = collect(plan, tmp_path / "run")

    assert summary.failed == 0, [r.error for r in summary.results]
    assert summary.completed == len(plan.items)
    for item in plan.items:
        directory = tmp_path / "run" / "raw" / item.incident.id
        assert (directory / "COMPLETE").exists()
        incident = json.loads((directory / "incident.json").read_text())
        assert incident["target"]["fingerprint"] == "kubernetes:kind-r2act/boutique"
        assert (directory / "during" / "metrics.parquet").stat().st_size > 0
    assert summary.log_records > 0
