"""Traces on a real kind cluster made by deploy/kind/up.sh (opt-in: --with-e2e).

Reads the last minute of Online Boutique's spans from r2act's Jaeger through the API
server's service proxy, as a campaign with a ``traces`` section does: preflight finds the
store receiving, and every span comes from one of the seven instrumented services.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from r2act.campaigns import KubernetesTarget
from r2act.campaigns.manifest import TracesConfig
from r2act.cluster.kube.cluster import TracedKubeCluster, connect_kubernetes
from r2act.schema import TimeWindow

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CONTEXT = "kind-r2act"
NAMESPACE = "boutique"


def _instrumented() -> set[str]:
    text = (REPO / "deploy" / "tracing" / "apply.sh").read_text()
    found = re.search(r"^INSTRUMENTED=\(\n(.*?)\n\)", text, re.M | re.S)
    assert found is not None
    return set(found.group(1).split())


def test_spans_of_the_instrumented_services_are_read_through_the_proxy() -> None:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not installed; see deploy/README.md")
    contexts = subprocess.run(
        ["kubectl", "config", "get-contexts", "-o", "name"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.split()
    if CONTEXT not in contexts:
        pytest.fail(f"no kubeconfig context {CONTEXT}; create the cluster with deploy/kind/up.sh")
    target = KubernetesTarget(kind="kubernetes", context=CONTEXT, namespace=NAMESPACE)
    cluster = connect_kubernetes(target, namespace=NAMESPACE, traces=TracesConfig(sample=1.0))
    assert isinstance(cluster, TracedKubeCluster)
    try:
        assert cluster.preflight({}).traces_problem is None
        now = time.time()
        spans = [s for b in cluster.traces(TimeWindow(start=now - 60, end=now), 1.0) for s in b]
    finally:
        cluster.close()
    assert spans, "no span in the last minute"
    assert {s.service for s in spans} <= _instrumented()
    assert {"server", "client"} <= {s.kind for s in spans}
    assert all(s.parent_id or s.service == "frontend" for s in spans)  # roots are the frontend's
